#!/bin/bash
# The steps of one call on a lent GPU machine (no Rust, no network; results under $OUT come
# back, at most eight files, even when the call runs past its limit). Files carried beside the
# tree, in DEV (default .device): nppbench.xz (a stripped release build), call_designs.xz (the
# GPU test binary of crates/cli/tests/call_designs.rs), the function lists and samples, and
# folders of NPP libraries compressed one a file (LIB/libnpp*.so.N.xz).
# docs/device-kit.sh builds nppbench.xz, call_designs.xz and the test binaries (.tests, .tests2).
# Usage: [BUDGET=SECONDS] device-steps.sh STEP...   (BUDGET: the call's limit less a margin, 570)
#   libs:DIR                      unpack DIR/*.xz into /tmp/$(basename DIR)
#   tests                         the GPU tests of call_designs.rs, with the toolkit's NPP
#   gputests                      every GPU test: TESTS/NAME.xz (stripped test binaries) run with
#                                 the tests TESTS/names.txt lists for each (NAME TEST...; written
#                                 by docs/gpu-test-names.py), the toolkit's NPP and
#                                 NPPBENCH_REQUIRE_GPU=1; the tree is linked
#                                 where the binaries were built (/work/main) for the paths cargo
#                                 compiled into them
#   design:VER:RESUME:FUNCS:LIMIT:LIB
#                                 docs/catalogue-designs-runs.sh for VER (a catalogue/ folder),
#                                 resuming the lines of RESUME (.gz), over FUNCS, stopped after
#                                 LIMIT s (auto: what the budget leaves, less 40 s), with /tmp/LIB
#   stranger:VER:LIB:SAMPLE:DESIGNS:TAG
#                                 a stranger's draw (20 shapes, seed 45) of SAMPLE's functions,
#                                 scored by the rules fitted on DESIGNS
#   bin:NAME                      unpack DEV/NAME.xz (another nppbench build) into /tmp/NAME
#   ctx                           benches/context-startup/inproc.sh (a context made inside a
#                                 running process against a fresh process)
#   speed:NAME=ARGS;NAME=ARGS...  docs/speed-runs.sh with the toolkit's NPP (ARGS @/tmp/NAME,...
#                                 runs the build unpacked by bin:NAME); speed.tgz holds the table,
#                                 the logs and each run compared with the first (compare-*.md),
#                                 runs-K.tar the run files, a few to a file (under 16 MiB each)
# Everything the steps print goes to $OUT/steps.log as it is printed, so that a call killed at
# its limit still says how far it got; each step is stopped where the budget ends.
set -u
dev=${DEV:-.device}
start=$(date +%s); deadline=$((start + ${BUDGET:-570}))
root=$(cd "$(dirname "$0")/.." && pwd)
exec > >(tee -a "$OUT/steps.log") 2>&1
left() { echo $((deadline - $(date +%s))); }
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
xz -dc "$dev/nppbench.xz" > /tmp/nppbench.new && chmod +x /tmp/nppbench.new && mv /tmp/nppbench.new /tmp/nppbench
for step in "$@"; do
  t0=$(date +%s)
  echo "== $step ($(left) s left)"
  case $step in
  libs:*)
    src=${step#libs:}; name=$(basename "$src"); mkdir -p "/tmp/$name"
    # Waited for by pid: a bare `wait` would wait for the tee of this script's output too.
    pids=(); for f in "$src"/*.xz; do xz -dc "$f" > "/tmp/$name/$(basename "$f" .xz)" & pids+=($!); done
    wait "${pids[@]}"
    ls "/tmp/$name" | tr '\n' ' '; echo ;;
  bin:*)
    name=${step#bin:}; xz -dc "$dev/$name.xz" > "/tmp/$name" && chmod +x "/tmp/$name" && echo "/tmp/$name" ;;
  ctx)
    mkdir -p /tmp/ctx; timeout "$(left)" bash "$root/benches/context-startup/inproc.sh" /tmp/ctx | tee /tmp/ctx/inproc-results.txt
    tar czf "$OUT/ctx.tgz" -C /tmp ctx ;;
  tests)
    xz -dc "$dev/call_designs.xz" > /tmp/call_designs && chmod +x /tmp/call_designs
    NPPBENCH_BIN=/tmp/nppbench NPPBENCH_ROOT=$root timeout "$(left)" /tmp/call_designs --test-threads 1 > /tmp/gpu-tests.log 2>&1
    echo "tests rc=$?"; grep -E "^test |test result" /tmp/gpu-tests.log; gzip -c /tmp/gpu-tests.log > "$OUT/gpu-tests.log.gz" ;;
  gputests)
    tests=${TESTS:-.tests}; mkdir -p /tmp/t "$root/target/release"
    [ -e /work/main ] || { mkdir -p /work && ln -s "$root" /work/main; }
    cp /tmp/nppbench "$root/target/release/nppbench"
    while read -r name names; do
      xz -dc "$tests/$name.xz" > "/tmp/t/$name" && chmod +x "/tmp/t/$name"
      s=$(date +%s)
      # shellcheck disable=SC2086 # the test names, one filter each
      (cd /work/main/crates/cli && NPPBENCH_REQUIRE_GPU=1 NPPBENCH_BIN=/tmp/nppbench NPPBENCH_ROOT=/work/main \
        timeout "$(left)" "/tmp/t/$name" --test-threads 1 $names < /dev/null > "/tmp/t/$name.log" 2>&1)
      echo "test $name rc=$? $(( $(date +%s) - s )) s $(grep 'test result' "/tmp/t/$name.log")"
      grep -E "^test .*FAILED|panicked" "/tmp/t/$name.log" | head -5
    done < "$tests/names.txt"
    (cd /tmp/t && tar czf "$OUT/gpu-tests.tgz" ./*.log) ;;
  design:*)
    IFS=: read -r _ ver resume funcs limit lib <<< "$step"
    o=/tmp/r-$ver; rm -rf "$o"; mkdir -p "$o"
    [ -f "$resume" ] && zcat "$resume" > "$o/design-$ver.jsonl"
    [ "$limit" = auto ] && limit=$(( $(left) - 40 ))
    [ "$limit" -lt 30 ] && { echo "design $ver skipped: $limit s left"; continue; }
    echo "design $ver: limit $limit s, $(wc -l < "$o/design-$ver.jsonl" 2>/dev/null || echo 0) lines before"
    LIMIT_S=$limit FUNCTIONS=$funcs SHUFFLE=47 bash "$root/docs/catalogue-designs-runs.sh" /tmp/nppbench "$o" 16 "$ver=/tmp/$lib"
    timeout 30 /tmp/nppbench call-catalogue --summarize "$o/design-$ver.jsonl" > "$o/summary-$ver.txt" 2>&1; cat "$o/summary-$ver.txt"
    gzip -c "$o/design-$ver.jsonl" > "$o/design-$ver.jsonl.gz"
    (dmesg 2>&1 | grep -i -E "xid|nvrm" | tail -80) | gzip > "$o/dmesg-$ver.txt.gz"
    tar czf "$OUT/design-$ver.tgz" -C "$o" "design-$ver.jsonl.gz" "summary-$ver.txt" "design-$ver.log" "dmesg-$ver.txt.gz" ;;
  stranger:*)
    IFS=: read -r _ ver lib sample designs tag <<< "$step"
    f=/tmp/stranger-$tag.jsonl; rm -f "$f"
    timeout -s INT $(( $(left) - 20 )) /tmp/nppbench call-catalogue --catalogue "$root/catalogue/$ver" --npp "/tmp/$lib" \
      --out "$f" --jobs 16 --stranger 20 --seed 45 --functions "$sample" > "/tmp/stranger-$tag.log" 2>&1
    echo "stranger $tag rc=$? $(wc -l < "$f") lines"
    /tmp/nppbench call-catalogue --summarize "$designs" --score "$f" > "/tmp/summary-stranger-$tag.txt" 2>&1
    tail -14 "/tmp/summary-stranger-$tag.txt"
    gzip -f "$f"; tar czf "$OUT/stranger-$tag.tgz" -C /tmp "stranger-$tag.jsonl.gz" "stranger-$tag.log" "summary-stranger-$tag.txt" ;;
  speed:*)
    IFS=';' read -r -a runs <<< "${step#speed:}"
    rm -rf /tmp/speed
    timeout "$(left)" bash "$root/docs/speed-runs.sh" /tmp/nppbench /tmp/speed /usr/local/cuda/lib64 "${runs[@]}"
    # Each run against the first (`nppbench compare`'s summary.md), then the run files packed a
    # few to a file: a file comes back only under 16 MiB, and at most eight files do.
    (cd /tmp/speed && first=
     for n in $(awk '{print $1}' speed.txt); do f=$(find "$n" -name run.json 2>/dev/null | head -1)
       [ -n "$f" ] || continue; gzip -c "$f" > "atlas-$n.json.gz"; gzip -f "$n.log"
       if [ -z "$first" ]; then first=$n
       else timeout 60 /tmp/nppbench compare --out "cmp-$n" "atlas-$first.json.gz" "atlas-$n.json.gz" > /dev/null 2>&1
         [ -f "cmp-$n/summary.md" ] && cp "cmp-$n/summary.md" "compare-$n-against-$first.md"; fi
     done
     tar czf "$OUT/speed.tgz" speed.txt gpu.txt ./*.log.gz compare-*.md 2>/dev/null
     k=1; batch=(); size=0
     for f in atlas-*.json.gz; do
       [ -e "$f" ] || continue; b=$(stat -c %s "$f")
       if [ ${#batch[@]} -gt 0 ] && [ $((size + b)) -gt $((14 << 20)) ]; then tar cf "$OUT/runs-$k.tar" "${batch[@]}"; k=$((k + 1)); batch=(); size=0; fi
       batch+=("$f"); size=$((size + b))
     done
     [ ${#batch[@]} -gt 0 ] && tar cf "$OUT/runs-$k.tar" "${batch[@]}"
     ls -la "$OUT") ;;
  *) echo "unknown step $step" ;;
  esac
  echo "== $step: $(( $(date +%s) - t0 )) s"
done
echo "total $(( $(date +%s) - start )) s"
