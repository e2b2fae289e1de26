#!/bin/bash
# The runs of session 42 on one H100 (GPU-342a87cc), in one device call:
#   before/after  the atlas preset of build efb5959 (`--preset atlas --seed 1`) by a build of
#                 efb5959 and by the build with the census from the last reading
#                 (probe/processes.rs), back to back: reports/batches/atlas-npp-13.0.1-census-
#                 {before,after}.json.gz (each run.json as the tool wrote it, `gzip -9n`: a run
#                 file comes back from the device only under 16 MiB), re-judged by
#                 crates/analysis/tests/ordering_phase/;
#   plain-ab      the race program and our own program traced with efb5959's interposer (base)
#                 and with the question's budget counted without locked adds (plain), six rounds
#                 interleaved: reports/trace/cold-calls/plain-ab.log in git at c433f41, re-judged by
#                 crates/report/tests/trace_page/cold.rs;
#   GPU tests     release test binaries of this build (engine gpu, cli batches, faults and cli,
#                 gpu degrade), NPPBENCH_BIN set to the after build: reports/trace/gpu-tests-s42/.
# The device call carries at most 64 MiB with the tracked files: move reports/ out of the tree
# for the call, carry stripped and xz-compressed binaries in .device/ (.git/info/exclude).
# Usage: census-runs.sh BEFORE_BIN AFTER_BIN BASE_LIB PLAIN_LIB TESTS_DIR OUT_DIR
set -u
before=$1; after=$2; base=$3; plain=$4; tests=$5; out=$6
mkdir -p "$out/tests" "$out/ev"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
lscpu | grep -E "Model name|Socket|NUMA node\(s\)|L3" | tee -a "$out/gpu.txt"
for v in before after; do
  bin=$before; [ $v = after ] && bin=$after
  s=$(date +%s)
  "$bin" run --preset atlas --seed 1 --out "$out/run-$v" > "$out/log-$v.txt" 2>&1
  echo "run $v rc $? $(( $(date +%s) - s )) s"
done
# Each test binary is named CRATE--TEST and runs in its crate's folder, as cargo runs it.
for t in "$tests"/*; do
  n=$(basename "$t")
  (cd "crates/${n%%--*}" && NPPBENCH_BIN=$after timeout 240 "$t" --test-threads 1 --show-output > "$out/tests/test-$n.log" 2>&1)
  echo "test $n rc $?"
done
ev=crates/trace/gpu-evidence
for p in race_program own_program; do
  nvcc -O2 -std=c++17 -o "$out/ev/$p" "$ev/$p.cu" -lnppial -lnppidei -lnppc -lcudart || exit 1
done
for i in 1 2 3 4 5 6; do
  for v in base plain; do
    lib=$base; [ $v = plain ] && lib=$plain
    for p in "race_program 20" "own_program 40"; do
      set -- $p
      NPPBENCH_TRACE_LIB=$lib "$after" trace --out "$out/ev/$v-$1-$i" -- "$out/ev/$@" 2>&1 | grep "recording cost" |
        sed "s/.*recording cost/$v $1 $i: recording cost/; s/, the driver.*//"
    done
  done
done | tee "$out/plain-ab.log"
