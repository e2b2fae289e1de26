#!/bin/bash
# A fresh context in a running process against a fresh process, 8 at a time with one hardware
# connection (as the memory probes run): does a context made and destroyed inside a probe cost
# less of the driver's one-at-a-time context work than a process does? Usage: inproc.sh OUTDIR
D=$(cd "$(dirname "$0")" && pwd); O=${1:-/tmp/ctx}; mkdir -p $O
nvcc -O2 -o /tmp/ctxbench $D/ctxbench.c -lcuda || exit 1
go(){ # label jobs count mode [args...]: count runs of `ctxbench mode args`, jobs at a time
  local label=$1 j=$2 n=$3 mode=$4; shift 4
  local s=$(date +%s.%N)
  seq $n | CUDA_DEVICE_MAX_CONNECTIONS=1 xargs -P $j -I{} /tmp/ctxbench $mode "$@" > $O/$label.txt
  local e=$(date +%s.%N)
  python3 "$D/summary.py" "$label" "$j" "$s" "$e" "$O/$label.txt" context
}
go process-j1 1 16 rel
go process-j8 8 64 rel
go inproc-j1 1 1 inproc 16
go inproc-j8 8 8 inproc 8
