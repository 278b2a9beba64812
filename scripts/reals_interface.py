#!/usr/bin/env python3
"""Prints an interface file `realsN` of two nodes, `a` and `b`, of N Reals each
(default 1,000, the size the interfaces issue asks every node to carry).
scripts/test.sh packs and runs the FMUs of reals1000; the benchmark measures
reals100: `scripts/reals_interface.py 100 > reals100.toml`."""

import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
print(f'name = "reals{n}"')
for slot, node in enumerate("ab"):
    print(f'\n[[node]]\nname = "{node}"\nslot = {slot}\nsignals = [')
    for i in range(n):
        print(f'  {{ name = "x{i}", type = "Real" }},')
    print("]")
