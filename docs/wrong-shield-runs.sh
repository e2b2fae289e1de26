#!/bin/bash
# The GPU evidence of `nppbench shield`'s wrong-pixel fix (issue #47, items 1 and 4), on the GPU
# machine's NPP: wrong_pixels (exact 8-bit functions at source steps 512..527, every call
# synchronised, every pixel checked) bare, under `shield` (all hazards, the knowledge built into
# nppbench) and under `shield --hazards leak,race` (the wrong pixels left alone); then the cost,
# ROUNDS rounds of each pair interleaved: wrong_pixels (staged calls) and overhead_check (calls
# the shield leaves alone), bare and shielded; and the seed report's program over 10,000 new
# threads and the race program under the same build, as before the staging.
# Usage: wrong-shield-runs.sh NPPBENCH OUT_DIR [ROUNDS=3]
set -u
bin=$1; out=$2; rounds=${3:-3}
ev=$(cd "$(dirname "$0")/../crates/trace/gpu-evidence" && pwd)
mkdir -p "$out/build"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
for p in wrong_pixels overhead_check seed_repro race_program; do
  nvcc -O2 -std=c++17 -o "$out/build/$p" "$ev/$p.cu" -lnppial -lnppidei -lnppitc -lnppc -lcudart || exit 1
done
b=$out/build
ms() { date +%s%N; }
step() { local name=$1; shift; local s; s=$(ms); "$@" > "$out/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $(( ($(ms) - s) / 1000000 )) ms; $(grep -hE 'wrong pixels:|host time per call|threads:|frames' "$out/$name.log" | tail -n 1)"; }
{
step wrong-bare "$b/wrong_pixels" 1
step wrong-shield "$bin" shield --report "$out/wrong-shield" -- "$b/wrong_pixels" 1
step wrong-leak-race-only "$bin" shield --hazards leak,race --report "$out/wrong-leak-race-only" -- "$b/wrong_pixels" 1
for r in $(seq 1 "$rounds"); do
  step "cost-wrong-bare-$r" "$b/wrong_pixels" 3
  step "cost-wrong-shield-$r" "$bin" shield --report "$out/cost-wrong-shield-$r" -- "$b/wrong_pixels" 3
  step "cost-overhead-bare-$r" "$b/overhead_check" 8 20000
  step "cost-overhead-shield-$r" "$bin" shield --report "$out/cost-overhead-shield-$r" -- "$b/overhead_check" 8 20000
done
step seed-shield "$bin" shield --report "$out/seed-shield" -- "$b/seed_repro" 10000
step race-shield "$bin" shield --report "$out/race-shield" -- "$b/race_program" 20
} | tee "$out/table.txt"
