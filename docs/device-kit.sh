#!/bin/bash
# Builds the kit that docs/device-steps.sh runs on a GPU machine without Rust, from this checkout:
#   .device/nppbench.xz          a release nppbench, debug info stripped, xz-compressed
#   .tests/NAME.xz, names.txt    every test binary with GPU tests, the same way, and the tests
#                                each runs (docs/gpu-test-names.py)
#   .tests2/                     gpu.rs's binary alone (a shorter `gputests` step)
#   .device/call_designs.xz      for the `tests` step
#   .device/BUILD                the commit they were built at
# The folders are ignored (.git/info/exclude) and passed to the device call in `carry`.
# Usage: bash docs/device-kit.sh   (from anywhere in the checkout; one build at a time)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
mkdir -p .device .tests .tests2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo build --release -q -p nppbench
strip --strip-debug -o "$tmp/nppbench" target/release/nppbench
xz -T2 -6 -c "$tmp/nppbench" > .device/nppbench.xz
python3 docs/gpu-test-names.py > .tests/names.txt
cargo test --release -q -p nppbench --no-run --message-format=json 2>/dev/null > "$tmp/cli.json"
cargo test --release -q -p nppbench-engine --test gpu --no-run --message-format=json 2>/dev/null > "$tmp/engine.json"
python3 - "$tmp" <<'PY'
import json, subprocess, sys
tmp = sys.argv[1]
names = {l.split()[0] for l in open('.tests/names.txt') if l.strip()}
packed = set()
for f in (f'{tmp}/cli.json', f'{tmp}/engine.json'):
    for l in open(f):
        try:
            m = json.loads(l)
        except ValueError:
            continue
        name = m.get('target', {}).get('name')
        if m.get('reason') != 'compiler-artifact' or not m.get('executable') or name not in names:
            continue
        subprocess.run(['strip', '--strip-debug', '-o', f'{tmp}/{name}', m['executable']], check=True)
        subprocess.run(f'xz -T2 -6 -c {tmp}/{name} > .tests/{name}.xz', shell=True, check=True)
        packed.add(name)
missing = names - packed
if missing:
    sys.exit(f'no test binary built for {sorted(missing)}: names.txt lists them')
print('packed', ' '.join(sorted(packed)))
PY
cp .tests/gpu.xz .tests2/gpu.xz
grep '^gpu ' .tests/names.txt > .tests2/names.txt
cp .tests/call_designs.xz .device/call_designs.xz
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (with uncommitted changes)')" > .device/BUILD
du -ch .device/nppbench.xz .tests/*.xz | tail -1
