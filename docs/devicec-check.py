#!/usr/bin/env python3
"""Which of an NPP library's `DeviceC` functions (constants in device memory) hand their call
straight to a function that takes its constants in host memory: a jump or call to a symbol
without `DeviceC` among its first instructions, read from the library's own code (objdump; no
GPU). Such a function reads its device pointer on the host, and a process whose constants are in
device memory dies of SIGSEGV. That is how `nppiMulDeviceCScale_8u_C4IR_Ctx` ends every
`call-catalogue` child (docs/catalogue.md, "Functions that kill their process").

Usage: devicec-check.py LIBNPPIAL.so...   (prints one line per such function, and a count)
"""
import re
import subprocess
import sys


def defined_functions(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    functions = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] == "T":
            functions[fields[2].split("@")[0]] = int(fields[0], 16)
    return functions


def first_target(lib, address):
    """The NPP function the first jump or call of the code at `address` goes to, if any."""
    out = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", f"--start-address={address:#x}", f"--stop-address={address + 0x40:#x}", lib],
        capture_output=True, text=True, check=True,
    ).stdout
    for line in [l for l in out.splitlines() if re.match(r"^\s+[0-9a-f]+:", l)][:12]:
        m = re.search(r"\s(jmp|call)\s+[0-9a-f]+ <(nppi\w+?)(@@|\+|>)", line)
        if m:
            return m.group(1), m.group(2)
    return None


for lib in sys.argv[1:]:
    functions = defined_functions(lib)
    device_c = sorted(s for s in functions if "DeviceC" in s and s.endswith("_Ctx"))
    forwarded = 0
    for symbol in device_c:
        target = first_target(lib, functions[symbol])
        if target and "DeviceC" not in target[1]:
            forwarded += 1
            print(f"{lib}: {symbol} {target[0]}s {target[1]}")
    print(f"{lib}: {forwarded} of {len(device_c)} DeviceC functions go straight to one that takes host constants")
