#!/bin/bash
# Issue #45's rate, 250 memory scenarios a second on one GPU (docs/performance.md): the atlas
# preset (seed 1, one throughput pass) with the memory probes' settings of each RUN, back to back
# on one GPU, the first setting again last to show the drift between the first and last runs.
# Each run's memory scenarios a second is read off its page ("Where the time went", which
# `nppbench report` derives from run.json's memory phase: timing::MemoryTiming.per_second).
# Usage: speed-runs.sh NPPBENCH_BIN OUT_DIR NPP_DIR [RUN...]
#   RUN   NAME=ARGS, the run's name and its extra `run` arguments, comma-separated; ARGS that
#         begin with @PATH run the nppbench binary at PATH instead (an earlier build: before
#         and after a change, back to back)
#         (default: j8=--jobs,8 j12=--jobs,12 j16=--jobs,16 j16b128=--jobs,16,--batch,128);
#         about 100 s each on an H100. Readings shared by the parent against own readings:
#         own=--memory-readings,own shared=--memory-readings,shared
# AGAIN=0 leaves out the first setting's second run.
# Prints a table: name, wall seconds, exit status, memory scenarios a second; OUT_DIR/NAME/ holds
# each run.json, its log and its page.
set -u
bin=$1; out=$2; npp=$3; shift 3
runs=("$@")
[ ${#runs[@]} -eq 0 ] && runs=(j8=--jobs,8 j12=--jobs,12 j16=--jobs,16 j16b128=--jobs,16,--batch,128)
[ "${AGAIN:-1}" = 0 ] || runs+=("${runs[0]%%=*}-again=${runs[0]#*=}")
mkdir -p "$out"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
for r in "${runs[@]}"; do
  name=${r%%=*}; IFS=, read -r -a extra <<< "${r#*=}"
  use=$bin
  first=${extra[0]:-}
  if [ "$first" != "${first#@}" ]; then use=${first#@}; extra=("${extra[@]:1}"); fi
  s=$(date +%s)
  "$use" run --preset atlas --seed 1 --repeat 1 --npp "$npp" --out "$out/$name" "${extra[@]}" > "$out/$name.log" 2>&1
  rc=$?
  wall=$(( $(date +%s) - s ))
  file=$(find "$out/$name" -name run.json | head -1)
  rate=—
  if [ -n "$file" ] && "$bin" report --from "$file" --out "$out/$name/page" > /dev/null 2>&1; then
    rate=$(grep -o '[0-9.]* a second over the memory phase' "$out/$name/page/index.html" | head -1 | cut -d' ' -f1)
  fi
  echo "$name ${wall} s rc=$rc ${rate:-—}/s" | tee -a "$out/speed.txt"
done
