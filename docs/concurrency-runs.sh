#!/bin/bash
# Issue #50's evidence: the recording cost `trace` states for a thread's first calls when many
# threads make them at once. crates/trace/gpu-evidence/concurrent_first_calls.cu with 10,000
# calls, 1, 10, 100 and 1,000 threads alive at a time, traced, ROUNDS rounds interleaved, each
# trace's page and log kept; the table last: the recording cost a call and the calls recorded.
# Usage: concurrency-runs.sh NPPBENCH OUT_DIR [ROUNDS=2] [CALLS=10000]
set -u
bin=$1; out=$2; rounds=${3:-2}; calls=${4:-10000}
ev=$(cd "$(dirname "$0")/../crates/trace/gpu-evidence" && pwd)
mkdir -p "$out/build"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
nvcc -O2 -std=c++17 -o "$out/build/concurrent_first_calls" "$ev/concurrent_first_calls.cu" -lnppidei -lnppc -lcudart || exit 1
for r in $(seq 1 "$rounds"); do
  for alive in 1 10 100 1000; do
    name=alive-$alive-$r
    "$bin" trace --out "$out/$name" -- "$out/build/concurrent_first_calls" "$calls" "$alive" > "$out/$name.log" 2>&1
    echo "$name rc=$? $(grep -o 'recording cost [^;]*' "$out/$name.log" | head -n 1); $(grep -o '^traced [^:]*: [0-9]* NPP calls' "$out/$name.log")"
  done
done | tee "$out/table.txt"
