#!/bin/bash
# Context start-up under concurrency. Usage: run.sh OUTDIR
D=$(cd "$(dirname "$0")" && pwd); O=${1:-/tmp/ctx}; mkdir -p $O
nvcc -O2 -o /tmp/ctxbench $D/ctxbench.c -lcuda || exit 1
nvidia-smi -q | grep -iE 'Persistence|Product Name|Driver Version|Compute Mode' > $O/smi.txt
nvidia-smi topo -m >> $O/smi.txt 2>&1
N=48
go(){ # label jobs mode [env...]
  local label=$1 j=$2 mode=$3; shift 3
  local s=$(date +%s.%N)
  seq $N | env "$@" xargs -P $j -I{} /tmp/ctxbench $mode > $O/$label.txt
  local e=$(date +%s.%N)
  python3 - "$label" "$j" "$s" "$e" "$O/$label.txt" <<'P'
import sys,statistics as st
l,j,s,e,f=sys.argv[1],int(sys.argv[2]),float(sys.argv[3]),float(sys.argv[4]),sys.argv[5]
rows=[list(map(float,x.split()[1:])) for x in open(f) if x[0].isalpha() and 'failed' not in x]
if not rows: print(l,'no rows'); sys.exit()
med=[st.median(c) for c in zip(*rows)]
print("%-28s jobs %2d n %2d wall %6.2f s  per-proc %5.0f ms | init %5.0f ctx %5.0f alloc %4.0f rel %4.0f total %5.0f (medians, ms)"%(l,j,len(rows),e-s,(e-s)*1000/len(rows),*med))
P
}
for j in 1 8 16; do go init-j$j $j init; done
for j in 1 4 8 16; do go ctx-j$j $j ctx; done
go rel-j1 1 rel
go rel-j8 8 rel
go create-j8 8 create
go ctx-j8-conn1 8 ctx CUDA_DEVICE_MAX_CONNECTIONS=1
go ctx-j8-eager 8 ctx CUDA_MODULE_LOADING=EAGER
# a process holding the GPU open throughout
/tmp/ctxbench hold 0 60 > /dev/null &
H=$!; sleep 2
go held-ctx-j1 1 ctx
go held-ctx-j8 8 ctx
go held-init-j8 8 init
kill $H
