#!/bin/bash
# Every synthesisable function of each NPP version's catalogue called from its roles on the GPU
# machine (issue #45; docs/catalogue.md, "Calling every function from its roles"), JOBS children
# at once, then each run's outcomes counted (`call-catalogue --summarize`).
# After each version the kernel's NVIDIA lines are kept (dmesg-VERSION.txt), and the script stops
# at a GPU that needs a reset: runs with twelve children, before the children took turns, left
# H100s in a full-chip reset (reports/catalogue-calls/h100-oracles/); four with the turns did not
# (reports/catalogue-calls/h100-roi/). Twelve with the turns have not been tried.
# Each version's calls are resumed (`--resume`): run the script again with the same OUT_DIR (its
# calls-VERSION.jsonl carried back in) and it calls only the functions without a line, so that a
# catalogue spans several commands each under a time limit (LIMIT_S seconds a version, default
# none: the command is stopped by SIGTERM, merges what its children wrote and exits 130). A run
# killed outright leaves its children's part files, which --resume keeps; and --resume calls
# again the functions whose library was missing from NPP_DIR (one brought in a later command).
# FUNCTIONS=FILE calls only the functions the file names (`call-catalogue --functions`), say the
# functions one version alone flagged (reports/catalogue-calls/h100-1918/again.txt).
# Usage: [LIMIT_S=N] [FUNCTIONS=FILE] catalogue-calls-runs.sh NPPBENCH OUT_DIR JOBS VERSION=NPP_DIR...
#   VERSION   a folder of catalogue/ (npp-13.0.1.2); NPP_DIR the libraries of that version.
# Example: LIMIT_S=250 catalogue-calls-runs.sh /tmp/b/nppbench /tmp/o 4 npp-13.0.1.2=/usr/local/cuda/lib64
set -u
bin=$1; out=$2; jobs=$3; shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
for pair in "$@"; do
  version=${pair%%=*}; npp=${pair#*=}
  s=$(date +%s)
  timeout "${LIMIT_S:-0}" "$bin" call-catalogue --catalogue "$root/catalogue/$version" --npp "$npp" \
    --jobs "$jobs" --out "$out/calls-$version.jsonl" --resume ${FUNCTIONS:+--functions "$FUNCTIONS"} \
    >> "$out/calls-$version.log" 2>&1
  echo "$version rc=$? $(( $(date +%s) - s )) s, $(wc -l < "$out/calls-$version.jsonl") lines"
  "$bin" call-catalogue --summarize "$out/calls-$version.jsonl" | tee "$out/summary-$version.txt"
  (dmesg 2>&1 | grep -i -E "xid|nvrm" | tail -50) > "$out/dmesg-$version.txt"
  if nvidia-smi -q 2>&1 | grep -q "requires reset"; then
    echo "the GPU needs a reset after $version: stopping (dmesg-$version.txt)"
    exit 1
  fi
done
