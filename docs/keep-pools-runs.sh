#!/bin/bash
# The runs #30's next experiment waits for (docs/performance.md, "Pools kept"): the atlas preset
# with and without --keep-pool-threads, back to back on one GPU, in one device call (about 4
# minutes on an H100), each run.json gzip-compressed as it is committed (README: a run too large
# to commit whole).
#   default  every pool of more than four threads on the per-thread default stream heads a
#            process of its own (queue::must_head);
#   kept     each pool's threads kept until their process ends, no pool heading one.
# What decides it: every scenario's leak class, NPP streams kept per thread and race the same in
# both (as crates/analysis/tests/ordering_phase.rs's same_answers judges a pair), and the
# processes and memory phase each run took.
# Usage: keep-pools-runs.sh NPPBENCH_BIN OUT_DIR
set -u
bin=$1; out=$2
mkdir -p "$out"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
for v in default kept; do
  flag=; [ $v = kept ] && flag=--keep-pool-threads
  s=$(date +%s)
  "$bin" run --preset atlas --seed 1 $flag --out "$out/run-$v" > "$out/log-$v.txt" 2>&1
  echo "run $v rc $? $(( $(date +%s) - s )) s"
  gzip -9n -c "$out/run-$v/run.json" > "$out/atlas-npp-13.0.1-pools-$v.json.gz"
done
