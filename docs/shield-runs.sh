#!/bin/bash
# The GPU evidence of `nppbench shield` (docs/shield.md), on the GPU machine: the seed report's
# program over 10,000 new threads and the race program, each bare and under `shield`, with
# `trace --fail-on leak,race` on the race program beside them (the installed layout: nppbench and
# libnppbench_trace.so side by side, as `cargo xtask install` puts them), and the lifecycle
# program's fork and SIGTERM modes under shield.
# Usage: shield-runs.sh NPPBENCH OUT_DIR ATLAS_RUN...
#   ATLAS_RUN  runs of the machine's NPP version with the leak and the race measured.
set -u
bin=$1; out=$2; shift 2
ev=$(cd "$(dirname "$0")/../crates/trace/gpu-evidence" && pwd)
atlas=(); for a in "$@"; do atlas+=(--atlas "$a"); done
mkdir -p "$out/build"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
for p in seed_repro race_program lifecycle_program; do
  nvcc -O2 -std=c++17 -o "$out/build/$p" "$ev/$p.cu" -lnppial -lnppidei -lnppc -lcudart || exit 1
done
b=$out/build
step() { local name=$1; shift; local s; s=$(date +%s%N)
  "$@" > "$out/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $(( ($(date +%s%N) - s) / 1000000 )) ms; $(grep -E "threads:|wrong|frames" "$out/$name.log" | tail -n 1)"; }
step seed-bare "$b/seed_repro" 10000
step seed-shield "$bin" shield "${atlas[@]}" --report "$out/seed-shield" -- "$b/seed_repro" 10000
step race-bare "$b/race_program" 20
step race-trace "$bin" trace "${atlas[@]}" --fail-on leak,race --out "$out/race-trace" -- "$b/race_program" 20
step race-shield "$bin" shield "${atlas[@]}" --report "$out/race-shield" -- "$b/race_program" 20
step fork-shield "$bin" shield "${atlas[@]}" --report "$out/fork-shield" -- "$b/lifecycle_program" fork 10
step term-shield "$bin" shield "${atlas[@]}" --report "$out/term-shield" -- "$b/lifecycle_program" term 100
