#!/bin/bash
# What one NVML listing of a device's compute processes costs (the call a memory probe makes after
# each of a scenario's calls to read its own memory: ProcessMemoryProbe::used_bytes), beside a
# cudaMemGetInfo and a host thread made and joined, with 1, 8 and 16 processes doing the same at
# once (docs/performance.md, "Where a memory probe's time goes"). Needs nvcc and NVML (a GPU
# machine). Prints each process's line (a few), then the mean of the processes, microseconds a call.
# Usage: nvml-cost.sh [CALLS]   (default 1000 calls of each kind a process)
set -u
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-1000}
nvcc -O2 -o /tmp/nvml-cost "$here/nvml-cost.c" -lnvidia-ml -lpthread > /tmp/nvml-cost-build.log 2>&1 || { cat /tmp/nvml-cost-build.log; exit 1; }
for k in 1 8 16; do
  echo "== $k at once"
  pids=(); for i in $(seq "$k"); do /tmp/nvml-cost "$n" > "/tmp/nvml-cost-$k-$i.txt" & pids+=($!); done; wait "${pids[@]}"
  cat /tmp/nvml-cost-"$k"-*.txt | sort | head -3
  cat /tmp/nvml-cost-"$k"-*.txt | awk -F'[= ]' '{a+=$4;b+=$6;c+=$8} END {printf "mean nvml %.1f memgetinfo %.1f thread %.1f us\n",a/NR,b/NR,c/NR}'
done
