#!/bin/bash
# The runs issues #30 and #29 wait for (docs/performance.md, "Heads of batches"; docs/atlas.md):
#   before  the atlas of commit 5c262bc's preset, by a build of 5c262bc;
#   after   the same matrix by a build with heads of batches (runner/memory_phase/queue.rs),
#           back to back on the same GPU: scenarios a second before and after, and the classes
#           of both (a test must re-judge them, as crates/analysis/tests/ordering_phase/ does);
#   preset  the atlas preset as it is now, with every function's throughput declared
#           non-blocking beside the context from the stream (#29: the run page's fix list then
#           times that fix from the atlas itself).
# Usage: heads-runs.sh NPPBENCH_BIN OLD_NPPBENCH_BIN OUT_DIR [RUN...]
#   NPPBENCH_BIN      a build of this repository;
#   OLD_NPPBENCH_BIN  a build of commit 5c262bc;
#   OUT_DIR           receives gpu.txt, old-atlas.toml, each run's folder and log;
#   RUN               which of before, after, preset (all three by default: about 6 minutes on
#                     an H100, more than one device call leaves room for with the seam's runs).
set -u
new=$1; old=$2; out=$3; shift 3
runs=${*:-before after preset}
mkdir -p "$out"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
"$old" preset atlas > "$out/old-atlas.toml"
run() {
  local name=$1 bin=$2; shift 2
  local s; s=$(date +%s)
  "$bin" run --out "$out/$name" "$@" > "$out/log-$name.txt" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s"
}
for r in $runs; do
  case $r in
    before) run before "$old" --matrix "$out/old-atlas.toml" --seed 1 ;;
    after) run after "$new" --matrix "$out/old-atlas.toml" --seed 1 ;;
    preset) run preset "$new" --preset atlas --seed 1 ;;
  esac
done
