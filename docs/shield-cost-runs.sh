#!/bin/bash
# What `nppbench shield` costs (issue #47, item 4), back to back on one GPU, ROUNDS rounds of each
# pair interleaved: overhead_check (a call the shield leaves alone: its host time per call, as
# the program measures it), and the seed report's program and the race program (whole programs:
# wall time), each bare and under `shield` with the knowledge built into nppbench.
# Usage: shield-cost-runs.sh NPPBENCH OUT_DIR [ROUNDS=3]
set -u
bin=$1; out=$2; rounds=${3:-3}
ev=$(cd "$(dirname "$0")/../crates/trace/gpu-evidence" && pwd)
mkdir -p "$out/build"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
for p in overhead_check seed_repro race_program; do
  nvcc -O2 -std=c++17 -o "$out/build/$p" "$ev/$p.cu" -lnppial -lnppidei -lnppc -lcudart || exit 1
done
b=$out/build
ms() { date +%s%N; }
timed() { local name=$1; shift; local s; s=$(ms); "$@" > "$out/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $(( ($(ms) - s) / 1000000 )) ms $(grep -h 'host time per call' "$out/$name.log")"; }
for r in $(seq 1 "$rounds"); do
  timed "overhead-bare-$r" "$b/overhead_check" 8 20000
  timed "overhead-shield-$r" "$bin" shield -- "$b/overhead_check" 8 20000
  timed "seed-bare-$r" "$b/seed_repro" 2000
  timed "seed-shield-$r" "$bin" shield -- "$b/seed_repro" 2000
  timed "race-bare-$r" "$b/race_program" 20
  timed "race-shield-$r" "$bin" shield -- "$b/race_program" 20
done | tee "$out/table.txt"
