#!/bin/bash
# The GPU evidence issue #32 asks for, for the recorder behind its seam (crates/trace/src/recorder/
# and writer/) with the race question asked within a budget (recorder/pending.rs):
#   1. recording cost before and after, back to back on one GPU: the evidence programs traced
#      with the library of commit 5c262bc (every call that can race asks cuStreamQuery) and with
#      this one, in turn, four rounds (crates/trace/gpu-evidence/ab.sh);
#   2. the three ways of asking (NPPBENCH_TRACE_ASK_PENDING=0, unset, all) on this library,
#      interleaved, on the seed's program;
#   3. race_program (--fail-on leak,race: its racing site must still be named within the budget,
#      and with every call asked), the seed's program, and the lifecycle programs: fork, SIGTERM
#      after 100 calls, 10,000 threads each creating a stream and calling.
# Usage: seam-runs.sh BEFORE_LIB AFTER_LIB NPPBENCH_BIN ATLAS_RUN OUT_DIR
#   BEFORE_LIB, AFTER_LIB  libnppbench_trace.so of commit 5c262bc and of this build;
#   NPPBENCH_BIN           a build of this repository;
#   ATLAS_RUN              an atlas run.json of the machine's NPP version, with the race measured;
#   OUT_DIR                receives gpu.txt, ab.log, asking.log and each trace's folder and log.
set -u
before=$1; after=$2; bin=$3; atlas=$4; out=$5
ev=$(cd "$(dirname "$0")/../crates/trace/gpu-evidence" && pwd)
mkdir -p "$out"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
bash "$ev/ab.sh" "$before" "$after" "$bin" "$out/ab" > "$out/ab.log" 2>&1; echo "ab rc $?"
for p in race_program lifecycle_program; do
  nvcc -O2 -std=c++17 -o "$out/ab/build/$p" "$ev/$p.cu" -lnppial -lnppidei -lnppc -lcudart
done
b=$out/ab/build
trace() { local name=$1; shift; "$bin" trace --out "$out/$name" "$@" > "$out/$name.log" 2>&1; echo "trace $name rc $?"; }
export NPPBENCH_TRACE_LIB=$after
trace race-program --atlas "$atlas" --fail-on leak,race -- "$b/race_program" 20
NPPBENCH_TRACE_ASK_PENDING=all trace race-program-ask-all --atlas "$atlas" --fail-on leak,race -- "$b/race_program" 20
trace seed-repro-pending --atlas "$atlas" -- "$b/seed_repro" 100
trace lifecycle-fork -- "$b/lifecycle_program" fork 10
trace lifecycle-term -- "$b/lifecycle_program" term 100
trace lifecycle-threads -- "$b/lifecycle_program" threads 10000
for i in 1 2 3; do
  for a in 0 budget all; do
    NPPBENCH_TRACE_ASK_PENDING=$a "$bin" trace --out "$out/asking-$a-$i" -- "$b/seed_repro" 200 2>&1 |
      grep "recording cost" | sed "s/.*recording cost/ask=$a $i: recording cost/; s/, the driver.*//"
  done
done | tee "$out/asking.log"
