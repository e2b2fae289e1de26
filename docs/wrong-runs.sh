#!/bin/bash
# How the wrong-pixel study of docs/atlas.md ("Wrong pixels") was made, on the GPU machine, in one
# go: docs/atlas/wrong.toml and a stranger's draw, docs/atlas/judge-wrong.toml, each measured on
# every NPP version given, side by side in one run (`run --npp A --npp B …`). Then, anywhere (no
# GPU needed), the rule of each version is scored on the stranger's draw of that version:
#   nppbench predict --atlas wrong/runs/N/run.json --against judge-wrong/runs/N/run.json
# Usage: docs/wrong-runs.sh NPPBENCH OUT_DIR NPP_DIR [NPP_DIR…]
#   NPP_DIR  a folder of NPP libraries (libnppc, libnppidei, libnppial, libnppitc): the wheels'
#            (`cargo xtask npp fetch VERSION` puts them in .npp/VERSION/) or the toolkit's lib64.
# Writes OUT_DIR/wrong/runs/N/run.json, OUT_DIR/judge-wrong/runs/N/run.json and each run's log.
set -u
bin=$1; out=$2; shift 2
nppflags=(); for d in "$@"; do nppflags+=(--npp "$d"); done
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
for m in wrong judge-wrong; do
  s=$(date +%s)
  "$bin" run --matrix "$here/atlas/$m.toml" "${nppflags[@]}" --out "$out/$m" > "$out/$m.log" 2>&1
  echo "$m rc=$? $(( $(date +%s) - s )) s"
done
