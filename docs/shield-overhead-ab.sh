#!/bin/bash
# What a call the shield leaves alone costs a program, one build against another, back to back on
# one GPU: overhead_check (nppiConvert_8u32f_C1R_Ctx 64x64 on non-blocking streams, 8 threads,
# 20,000 calls each: a configuration no rule calls hazardous) bare, under BEFORE's shield and
# under AFTER's, ROUNDS rounds interleaved; the program's own host time per call, and the time
# the shield says it spent (AFTER's report, where it gives one).
# Usage: shield-overhead-ab.sh BEFORE_NPPBENCH AFTER_NPPBENCH OUT_DIR [ROUNDS=5]
set -u
before=$1; after=$2; out=$3; rounds=${4:-5}
ev=$(cd "$(dirname "$0")/../crates/trace/gpu-evidence" && pwd)
mkdir -p "$out/build"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
nvcc -O2 -std=c++17 -o "$out/build/overhead_check" "$ev/overhead_check.cu" -lnppial -lnppidei -lnppc -lcudart || exit 1
p=$out/build/overhead_check
step() { local name=$1; shift; "$@" > "$out/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $(grep -h 'host time per call' "$out/$name.log") $(grep -ho '[0-9]* ns a call left alone' "$out/$name.log")"; }
for r in $(seq 1 "$rounds"); do
  step "bare-$r" "$p" 8 20000
  step "before-$r" "$before" shield -- "$p" 8 20000
  step "after-$r" "$after" shield -- "$p" 8 20000
done | tee "$out/table.txt"
