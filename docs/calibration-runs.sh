#!/bin/bash
# The calibration runs of docs/calibration.md: runs of a preset one after another in fresh
# processes, plain, then with a delay hook, every run at the preset's defaults; each run's log
# beside it. DELAY names the hook and its value (default NPPBENCH_DELAY_CYCLES=100; the scaled one
# is NPPBENCH_DELAY_CYCLES_PER_MPIXEL=100) and DNAME the delayed runs' prefix (default "delay").
# Each run writes its folder OUT_DIR/NAME; reports/calibration/<card>/ keeps each run's run.json as
# PRESET/NAME.json (quick/quick-1.json, full/delay-full-2.json), beside gpu.txt.
# Usage: calibration-runs.sh NPPBENCH_BIN OUT_DIR PRESET PLAIN DELAYED [PRESET PLAIN DELAYED...]
# For example, a card's whole set (what an H200 still lacks):
#   calibration-runs.sh target/release/nppbench reports/calibration/h200 quick 7 2 full 2 2
#   DELAY=NPPBENCH_DELAY_CYCLES_PER_MPIXEL=100 DNAME=scaled \
#     calibration-runs.sh target/release/nppbench reports/calibration/h200 full 0 2
set -u
bin=$1; out=$2; shift 2
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader | tee "$out/gpu.txt"
while [ $# -ge 3 ]; do
  preset=$1; plain=$2; delayed=$3; shift 3
  for i in $(seq 1 "$plain"); do
    s=$(date +%s)
    "$bin" run --preset "$preset" --out "$out/$preset-$i" > "$out/log-$preset-$i.txt" 2>&1
    echo "$preset-$i rc=$? $(( $(date +%s) - s )) s"
  done
  for i in $(seq 1 "$delayed"); do
    name=${DNAME:-delay}-$preset-$i
    s=$(date +%s)
    env "${DELAY:-NPPBENCH_DELAY_CYCLES=100}" "$bin" run --preset "$preset" --out "$out/$name" > "$out/log-$name.txt" 2>&1
    echo "$name rc=$? $(( $(date +%s) - s )) s"
  done
done
