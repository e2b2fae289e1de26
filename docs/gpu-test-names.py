#!/usr/bin/env python3
"""The GPU tests, for `docs/device-steps.sh gputests`: one line a test binary, its name and then
every test of it whose body goes through `gpu_available` (the guard that skips without a GPU).
Usage: docs/gpu-test-names.py > .tests/names.txt   (run from the repository's root)"""
import glob
import re

# A test binary's modules (tests/NAME/*.rs) are read with it: a filter matches within a test's
# path, so their tests' names select them too.
for path in sorted(glob.glob("crates/cli/tests/*.rs")) + ["crates/engine/tests/gpu.rs"]:
    text = "".join(open(p).read() for p in [path] + sorted(glob.glob(path[:-3] + "/*.rs")))
    names = [m.group(1) for m in re.finditer(r"fn (\w+)\(\)[^{]*\{", text)
             if "gpu_available(" in text[m.end():m.end() + 600]]
    if names:
        print(path.split("/")[-1][:-3], " ".join(names))
