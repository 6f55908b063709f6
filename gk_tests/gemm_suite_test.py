#!/usr/bin/env python3
"""gk_bench/gemm_suite.h is gemm_suite.py's --header output, and the suite holds what the script
promises: 80 Llama-3 shapes, 20 squares, 40 random shapes with N, K multiples of 8, 10 odd."""
import subprocess
import sys

script, header = sys.argv[1], sys.argv[2]
want = subprocess.run([sys.executable, script, "--header"], check=True, capture_output=True, text=True).stdout
with open(header) as f:
    got = f.read()
if got != want:
    print("FAIL: %s is not what %s --header writes: regenerate it" % (header, script))
    sys.exit(1)
sys.path.insert(0, script.rsplit("/", 1)[0])
import gemm_suite  # noqa: E402

rows = gemm_suite.suite()
kinds = {}
for name, m, n, k, ta, tb in rows:
    kind = name.split()[0]
    kinds[kind] = kinds.get(kind, 0) + 1
    if kind in ("random", "odd") and not (1 <= m <= 16384 and 1 <= n <= 16384 and 1 <= k <= 16384):
        print("FAIL: %s %dx%dx%d out of [1, 16384]" % (name, m, n, k))
        sys.exit(1)
    if kind == "random" and (n % 8 or k % 8):
        print("FAIL: %s: N and K must be multiples of 8" % name)
        sys.exit(1)
    if kind == "odd" and (n % 2 == 0 or k % 2 == 0):
        print("FAIL: %s: N and K must be odd" % name)
        sys.exit(1)
want_kinds = {"llama3-8b": 40, "llama3-70b": 40, "square": 20, "random": 40, "odd": 10}
if kinds != want_kinds:
    print("FAIL: the suite holds %s, not %s" % (kinds, want_kinds))
    sys.exit(1)
print("PASS: %d shapes, header current" % len(rows))
