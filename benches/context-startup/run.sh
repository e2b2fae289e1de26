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
  python3 "$D/summary.py" "$label" "$j" "$s" "$e" "$O/$label.txt"
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
