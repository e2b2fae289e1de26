#!/bin/bash
# The runs of reports/batches/atlas-npp-13.0.1-ordering-{before,after}.json (docs/performance.md,
# issue #30): the atlas with the race's rounds in the memory probes (a build from before the
# ordering phase), then in ordering probes of their own, back to back on one GPU. The test
# crates/analysis/tests/ordering_phase/ re-judges the two. Also the run of
# reports/h200-fix-cost-npp-13.0.1/ (docs/atlas/fix-cost.toml, #29), and the traces of
# reports/trace/{race-program,seed-repro-pending,lifecycle-*}/ (crates/trace/gpu-evidence/).
# Usage: ordering-runs.sh NPPBENCH_BIN OLD_NPPBENCH_BIN OUT_DIR
#   NPPBENCH_BIN      a build of this repository, with libnppbench_trace.so beside it;
#   OLD_NPPBENCH_BIN  a build from before the ordering phase (commit b932d76);
#   OUT_DIR           receives gpu.txt, each run's folder and log.
set -u
new=$1; old=$2; out=$3
mkdir -p "$out"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
"$old" run --preset atlas --seed 1 --out "$out/before" > "$out/before.log" 2>&1; echo "before rc $?"
"$new" run --preset atlas --seed 1 --out "$out/after" > "$out/after.log" 2>&1; echo "after rc $?"
"$new" run --matrix docs/atlas/fix-cost.toml --out "$out/fix-cost" > "$out/fix-cost.log" 2>&1; echo "fix-cost rc $?"
ev=crates/trace/gpu-evidence
for p in race_program lifecycle_program seed_repro; do
  nvcc -O2 -std=c++17 -o "$out/$p" "$ev/$p.cu" -lnppial -lnppidei -lnppc -lcudart
done
trace() { local name=$1; shift; "$new" trace --out "$out/$name" "$@" > "$out/$name.log" 2>&1; echo "trace $name rc $?"; }
trace race-program --atlas "$out/after/run.json" --fail-on leak,race -- "$out/race_program" 20
trace seed-repro-pending --atlas "$out/after/run.json" -- "$out/seed_repro" 100
trace lifecycle-fork -- "$out/lifecycle_program" fork 10
trace lifecycle-term -- "$out/lifecycle_program" term 100
trace lifecycle-threads -- "$out/lifecycle_program" threads 10000
