#!/bin/bash
# The design of each function of an NPP version's catalogue on the GPU machine (issue #45;
# docs/catalogue.md, "The design per function"), JOBS children at once, resumed where an earlier
# command stopped (`--resume`: run it again with the same OUT_DIR carried back in), then a
# stranger's draw of STRANGER shapes (default 20, seed 45) for the functions of SAMPLE (a file of
# names), and the designs summarized and scored on it (`call-catalogue --summarize --score`).
# Each command stops at LIMIT_S seconds (default none) by SIGINT: the parent merges what its
# children wrote. Everything lands in OUT_DIR, and OUT_DIR/results.tgz holds it all (a device
# that returns few files returns that one).
# Usage: [LIMIT_S=N] [FUNCTIONS=FILE] [SHUFFLE=SEED] [SAMPLE=FILE] [STRANGER=N]
#        catalogue-designs-runs.sh NPPBENCH OUT_DIR JOBS VERSION=NPP_DIR...
#   VERSION   a folder of catalogue/ (npp-13.0.1.2); NPP_DIR the libraries of that version.
#   FUNCTIONS the functions to design (default: every one the catalogue can call).
#   SHUFFLE   design them in an order shuffled by this seed (`--shuffle`): a command stopped at
#             LIMIT_S has designed a uniform random part of them, not each child's first.
# Example: LIMIT_S=500 SAMPLE=s.txt catalogue-designs-runs.sh /tmp/nppbench /tmp/o 8 npp-13.0.1.2=/usr/local/cuda/lib64
set -u
bin=$1; out=$2; jobs=$3; shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
run() { # FILE LOG ARGS...: one call-catalogue command, timed
  local file=$1 log=$2 s; shift 2
  s=$(date +%s)
  timeout -s INT "${LIMIT_S:-0}" "$bin" call-catalogue --out "$file" --jobs "$jobs" --resume "$@" >> "$log" 2>&1
  echo "$(basename "$file") rc=$? $(( $(date +%s) - s )) s, $(wc -l < "$file" 2>/dev/null) lines"
}
for pair in "$@"; do
  version=${pair%%=*}; npp=${pair#*=}
  common=(--catalogue "$root/catalogue/$version" --npp "$npp")
  run "$out/design-$version.jsonl" "$out/design-$version.log" "${common[@]}" --design \
    ${FUNCTIONS:+--functions "$FUNCTIONS"} ${SHUFFLE:+--shuffle "$SHUFFLE"}
  if [ -n "${SAMPLE:-}" ]; then
    run "$out/stranger-$version.jsonl" "$out/stranger-$version.log" "${common[@]}" \
      --stranger "${STRANGER:-20}" --seed 45 --functions "$SAMPLE"
    "$bin" call-catalogue --summarize "$out/design-$version.jsonl" --score "$out/stranger-$version.jsonl" \
      | tee "$out/summary-$version.txt"
  fi
  (dmesg 2>&1 | grep -i -E "xid|nvrm" | tail -50) > "$out/dmesg-$version.txt"
done
(cd "$out" && tar czf results.tgz --exclude=results.tgz .)
