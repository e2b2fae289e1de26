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
  python3 - "$label" "$j" "$s" "$e" "$O/$label.txt" <<'P'
import sys,statistics as st
l,j,s,e,f=sys.argv[1],int(sys.argv[2]),float(sys.argv[3]),float(sys.argv[4]),sys.argv[5]
rows=[list(map(float,x.split()[1:])) for x in open(f) if x[0].isalpha() and 'failed' not in x]
if not rows: print(l,'no rows'); sys.exit()
med=[st.median(c) for c in zip(*rows)]
print("%-22s jobs %2d contexts %3d wall %6.2f s  per-context %5.0f ms | init %5.0f ctx %5.0f alloc %4.0f rel %4.0f total %5.0f (medians, ms)"%(l,j,len(rows),e-s,(e-s)*1000/len(rows),*med))
P
}
go process-j1 1 16 rel
go process-j8 8 64 rel
go inproc-j1 1 1 inproc 16
go inproc-j8 8 8 inproc 8
