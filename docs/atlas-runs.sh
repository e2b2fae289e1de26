#!/bin/bash
# How reports/h100-atlas-bisected-npp-*/ and reports/judge/ were made, one NPP version a call, on
# the GPU machine: the atlas preset, the threshold search's rounds until nothing is left open, and
# the judge's draw (docs/atlas.md). NPP 13.0.1 was the toolkit's; NPP 12.2.3.2 the wheel's
# libraries (nvidia-npp-cu12==12.2.3.2), given with --npp. Then, anywhere:
#   nppbench report --from /tmp/a --out reports/h100-atlas-bisected-npp-VERSION
#   cp /tmp/judge/run.json reports/judge/npp-VERSION/run.json
# Usage: docs/atlas-runs.sh NPPBENCH [--npp DIR]
set -u
B=$1; shift
N="$*"
now() { date +%s; }
t=$(now); $B run --preset atlas --seed 1 $N --out /tmp/a/round-00 > /tmp/atlas.log 2>&1; echo "atlas rc $? $(( $(now) - t )) s"
for i in 01 02 03 04 05 06 07 08 09 10 11 12; do
  $B design --bisect --atlas /tmp/a --out /tmp/m$i.toml 2>&1 | tail -1
  [ -f /tmp/m$i.toml ] || break
  t=$(now); $B run --matrix /tmp/m$i.toml $N --out /tmp/a/round-$i > /tmp/round-$i.log 2>&1; echo "round $i rc $? $(( $(now) - t )) s"
done
t=$(now); $B run --matrix docs/atlas/judge.toml $N --out /tmp/judge > /tmp/judge.log 2>&1; echo "judge rc $? $(( $(now) - t )) s"
