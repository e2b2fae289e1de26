#!/bin/bash
# The runs of reports/batches/ (docs/performance.md, issue #30): the atlas batched (seed 1), then
# with a fresh process per scenario by a build from before batches, then batched again (seed 2),
# back to back on one GPU. The test crates/analysis/tests/batches.rs re-judged the three (both in
# git at c433f41).
# Usage: batches-runs.sh NPPBENCH_BIN OLD_NPPBENCH_BIN OUT_DIR
#   NPPBENCH_BIN      a build of this repository;
#   OLD_NPPBENCH_BIN  a build from before batches (commit 094b970, which measures every memory
#                     scenario in a process of its own);
#   OUT_DIR           receives gpu.txt, each run's folder and log; reports/batches/ keeps the
#                     run.json files as atlas-npp-13.0.1-{batched-seed-1,process-per-scenario,
#                     batched-seed-2}.json.
set -u
new=$1; old=$2; out=$3
mkdir -p "$out"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
run() {
  local name=$1 bin=$2; shift 2
  local s; s=$(date +%s)
  "$bin" run --preset atlas --out "$out/$name" "$@" > "$out/log-$name.txt" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s"
}
run batched-seed-1 "$new" --seed 1
run process-per-scenario "$old"
run batched-seed-2 "$new" --seed 2
