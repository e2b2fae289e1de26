#!/bin/bash
# The GPU evidence for `nppbench trace`: both programs compiled against the toolkit's NPP, run
# bare (their own memory figures) and traced, with the traces and pages under $1.
# Usage: run.sh OUT_DIR NPPBENCH_BIN [ATLAS_RUN...]
set -u
out=$1; bin=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/build"
for p in seed_repro own_program ordering_check; do
  nvcc -O2 -std=c++17 -o "$out/build/$p" "$here/$p.cu" -lnppial -lnppidei -lnppc -lcudart || exit 1
done
atlas=(); for a in "$@"; do atlas+=(--atlas "$a"); done
echo "== seed_repro, bare"; "$out/build/seed_repro" 100
echo "== seed_repro, traced"; "$bin" trace --out "$out/seed" "${atlas[@]}" -- "$out/build/seed_repro" 100; echo "exit $?"
echo "== own_program, bare"; "$out/build/own_program" 40
echo "== own_program, traced"; "$bin" trace --out "$out/own" "${atlas[@]}" -- "$out/build/own_program" 40; echo "exit $?"
echo "== ordering_check"; "$out/build/ordering_check" 2
