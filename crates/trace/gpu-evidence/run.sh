#!/bin/bash
# The GPU evidence for `nppbench trace`: the programs compiled against the toolkit's NPP, run
# bare (their own memory figures) and traced, with the traces and pages under $1; then the
# overhead check and the first-calls check, bare, with CUPTI alone (cupti_only.c, preloaded) and
# traced in turn, three and eight times (the host time per call they print, against the interposer's
# own figure in its trace; the CUPTI-only runs give CUPTI's own cost, which no trace can hold).
# Usage: run.sh OUT_DIR NPPBENCH_BIN [ATLAS_RUN...]
set -u
out=$1; bin=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/build"
for p in seed_repro own_program ordering_check overhead_check first_calls; do
  nvcc -O2 -std=c++17 -o "$out/build/$p" "$here/$p.cu" -lnppial -lnppidei -lnppc -lcudart || exit 1
done
atlas=(); for a in "$@"; do atlas+=(--atlas "$a"); done
echo "== seed_repro, bare"; "$out/build/seed_repro" 100
echo "== seed_repro, traced"; "$bin" trace --out "$out/seed" "${atlas[@]}" -- "$out/build/seed_repro" 100; echo "exit $?"
echo "== own_program, bare"; "$out/build/own_program" 40
echo "== own_program, traced"; "$bin" trace --out "$out/own" "${atlas[@]}" -- "$out/build/own_program" 40; echo "exit $?"
echo "== ordering_check"; "$out/build/ordering_check" 2
nvcc -O2 -shared -Xcompiler -fPIC -o "$out/build/cupti_only.so" "$here/cupti_only.c" -lcupti || exit 1
for i in 1 2 3; do
  echo "== overhead_check, bare ($i)"; "$out/build/overhead_check" 8 20000
  echo "== overhead_check, CUPTI only ($i)"; LD_PRELOAD="$out/build/cupti_only.so" "$out/build/overhead_check" 8 20000
  echo "== overhead_check, traced ($i)"; "$bin" trace --out "$out/overhead-$i" -- "$out/build/overhead_check" 8 20000; echo "exit $?"
done
# Eight rounds: a thread's first call varies by microseconds from run to run.
for i in 1 2 3 4 5 6 7 8; do
  echo "== first_calls, bare ($i)"; "$out/build/first_calls" 300
  echo "== first_calls, CUPTI only ($i)"; LD_PRELOAD="$out/build/cupti_only.so" "$out/build/first_calls" 300
  echo "== first_calls, traced ($i)"; "$bin" trace --out "$out/first-calls-$i" -- "$out/build/first_calls" 300; echo "exit $?"
done 2>&1 | tee "$out/first-calls.log"
# The means of each kind of run, from the lines above.
awk '/^== first_calls/ { kind = $3 " " $4; sub(/ \(.*/, "", kind) }
     /^host time of a thread/ { host[kind] += $8; n[kind]++ }
     /recording cost/ { match($0, /recording cost [0-9]+/); rec += substr($0, RSTART + 15, RLENGTH - 15); m++ }
     END { for (k in host) printf "first_calls %s: mean host time of a first call %.0f ns over %d runs\n", k, host[k] / n[k], n[k];
           if (m) printf "first_calls traced: mean recording cost %.0f ns a call over %d runs\n", rec / m, m }' "$out/first-calls.log" | sort
