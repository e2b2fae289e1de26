#!/bin/bash
# The GPU evidence for #32's last item, the recording cost of a cold call (a thread's first, after
# its own work swept the caches: the race program's every call), for the record path as it is now
# (crates/trace/src/recorder/: its code in one section, the record built before NPP's call, the
# counter read inline, errno kept on slow paths only, the process-wide state a call reads in one
# line, the thread's state reached from the thread pointer, the budget's line hinted at a racing
# call's start), against the library of the build before it (91e5fba):
#   1. race-ab.log: the race program and the lifecycle program's 300 threads, traced with each
#      library in turn, eight rounds;
#   2. ab.log: the other evidence programs, four rounds (crates/trace/gpu-evidence/ab.sh);
#   3. the race program with this library, within the budget and asking every call
#      (--fail-on leak,race: its racing site must be named, and no other), and the lifecycle
#      programs: fork, SIGTERM after 100 calls, 10,000 threads each creating a stream and calling.
# Usage: cold-path-runs.sh BEFORE_LIB AFTER_LIB NPPBENCH_BIN ATLAS_RUN OUT_DIR
#   BEFORE_LIB, AFTER_LIB  libnppbench_trace.so of build 91e5fba and of this build;
#   NPPBENCH_BIN           a build of this repository;
#   ATLAS_RUN              an atlas run.json of the machine's NPP version, with the race measured;
#   OUT_DIR                receives gpu.txt, race-ab.log, ab.log and each trace's folder and log.
set -u
before=$1; after=$2; bin=$3; atlas=$4; out=$5
ev=$(cd "$(dirname "$0")/../crates/trace/gpu-evidence" && pwd)
mkdir -p "$out"
{
  nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
  lscpu | grep -E "Model name|Socket|Core|L3"
  uname -r
} | tee "$out/gpu.txt"
bash "$ev/ab.sh" "$before" "$after" "$bin" "$out/ab" > "$out/ab.log" 2>&1; echo "ab rc $?"
b=$out/ab/build
for p in race_program lifecycle_program; do
  nvcc -O2 -std=c++17 -o "$b/$p" "$ev/$p.cu" -lnppial -lnppidei -lnppc -lcudart
done
for i in 1 2 3 4 5 6 7 8; do
  for v in base new; do
    lib=$before; [ $v = new ] && lib=$after
    for p in "race_program 20" "lifecycle_program threads 300"; do
      set -- $p
      NPPBENCH_TRACE_LIB=$lib "$bin" trace --out "$out/ab/$v-$1-$i" -- "$b/$@" 2>&1 | grep "recording cost" |
        sed "s/.*recording cost/$v $1 $i: recording cost/; s/, the driver.*//"
    done
  done
done > "$out/race-ab.log"
trace() { local name=$1; shift; "$bin" trace --out "$out/$name" "$@" > "$out/$name.log" 2>&1; echo "trace $name rc $?"; }
export NPPBENCH_TRACE_LIB=$after
trace race-program --atlas "$atlas" --fail-on leak,race -- "$b/race_program" 20
NPPBENCH_TRACE_ASK_PENDING=all trace race-program-ask-all --atlas "$atlas" --fail-on leak,race -- "$b/race_program" 20
trace lifecycle-fork -- "$b/lifecycle_program" fork 10
trace lifecycle-term -- "$b/lifecycle_program" term 100
trace lifecycle-threads -- "$b/lifecycle_program" threads 10000
rm -rf "$out/ab"
for v in base new; do for p in race_program lifecycle_program seed_repro own_program overhead_check first_calls; do
  cat "$out/race-ab.log" "$out/ab.log" | grep "^$v $p " | grep -o "cost [0-9]* ns a call" |
    awk -v v=$v -v p=$p '{s+=$2;n++;a=a" "$2} END{if(n) printf "%-4s %-18s mean %5.0f ns:%s\n",v,p,s/n,a}'
done; done
