#!/bin/bash
# The runs of session 43 on one H100 (GPU-05c7e12a), in two device calls back to back:
#   faults-{cur,new}  the atlas preset (`--preset atlas --seed 1`) by a build of d94ed15 and by
#                     the build that answers an NPP error in its batch where the context still
#                     works (probe/batch.rs), back to back: reports/batches/atlas-npp-13.0.1-
#                     faults-{cur,new}.json.gz, re-judged by
#                     crates/analysis/tests/ordering_phase/processes.rs;
#   two-versions      the atlas preset of the toolkit's NPP 13.0.1 and the 12.2.3.2 wheel's
#                     libraries in one run: reports/batches/atlas-two-versions-npp-*.json.gz.
# Then, on another H100 (GPU-4ba8fd07), in a third call: the committed build's atlas the same way
# (reports/batches/atlas-npp-13.0.1-confirm.json.gz), and the race program and our own program
# traced four times each with its interposer (reports/trace/cold-calls/confirm.log in git at c433f41; the commands
# of docs/census-runs.sh's plain-ab loop).
# The GPU tests of the final build, c58ccfd (engine gpu, cli batches, faults and cli, gpu degrade; release
# binaries, NPPBENCH_BIN set, reports/ not carried, so cli's three tests that read committed runs
# fail there) ran on another H100 (GPU-3e25c7ae): reports/trace/gpu-tests-s43/.
# (The pools pair, reports/batches/atlas-npp-13.0.1-pools-*.json.gz, was made the same way on
# GPU-ee9d10b2 by d94ed15's docs/keep-pools-runs.sh, with and without --keep-pool-threads.)
# The device call carries at most 64 MiB with the tracked files: move reports/ out of the tree
# for the call, carry stripped and xz-compressed binaries in .device/ (.git/info/exclude), and
# NPP 12.2.3's libraries in two calls (nppif alone in the second), staged in /tmp between them.
# Usage: faults-runs.sh CUR_BIN NEW_BIN NPP_12_2_3_DIR OUT_DIR
set -u
cur=$1; new=$2; npp12=$3; out=$4
mkdir -p "$out"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
lscpu | grep -E "Model name|Socket|NUMA node\(s\)|L3" | tee -a "$out/gpu.txt"
for v in cur new; do
  bin=$cur; [ $v = new ] && bin=$new
  s=$(date +%s)
  "$bin" run --preset atlas --seed 1 --out "$out/run-$v" > "$out/log-$v.txt" 2>&1
  echo "run $v rc $? $(( $(date +%s) - s )) s"
  gzip -9n -c "$out/run-$v/run.json" > "$out/atlas-npp-13.0.1-faults-$v.json.gz"
done
s=$(date +%s)
"$new" run --preset atlas --seed 1 --npp /usr/local/cuda/lib64 --npp "$npp12" --out "$out/two" > "$out/log-two.txt" 2>&1
echo "two-version atlas rc $? $(( $(date +%s) - s )) s"
gzip -9n -c "$out/two/runs/1/run.json" > "$out/atlas-two-versions-npp-13.0.1.json.gz"
gzip -9n -c "$out/two/runs/2/run.json" > "$out/atlas-two-versions-npp-12.2.3.json.gz"
