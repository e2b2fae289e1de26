#!/bin/bash
# Two interposer libraries against each other on one machine: the evidence programs traced with
# each in turn, four rounds (a round's programs run with one library, then the other), printing
# each trace's recording cost. The libraries are given to `nppbench trace` through
# NPPBENCH_TRACE_LIB.
# Usage: ab.sh BASE_LIB NEW_LIB NPPBENCH_BIN OUT_DIR
set -u
base=$1; new=$2; bin=$3; out=$4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/build"
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader
for p in seed_repro own_program overhead_check first_calls; do
  nvcc -O2 -std=c++17 -o "$out/build/$p" "$here/$p.cu" -lnppial -lnppidei -lnppc -lcudart || exit 1
done
grep -o -m2 "nonstop_tsc\|constant_tsc" /proc/cpuinfo | sort -u | tr "\n" " "; echo
for i in 1 2 3 4; do
  for v in base new; do
    lib=$base; [ $v = new ] && lib=$new
    for p in "seed_repro 200" "own_program 40" "overhead_check 8 5000" "first_calls 200"; do
      set -- $p
      NPPBENCH_TRACE_LIB=$lib "$bin" trace --out "$out/$v-$1-$i" -- "$out/build/$@" 2>&1 | grep "recording cost" |
        sed "s/.*recording cost/$v $1 $i: recording cost/; s/, the driver.*//"
    done
  done
done
