#!/usr/bin/env python3
"""Splices the dispatcher's measured table from gemm_suite_sweep's output (the lines between
"table begin" and "table end") into gk/gk_gemm_sm90.cuh, between its GK_GEMM_TUNED markers.

    python3 gk_bench/sweep/gemm_tuned_table.py SWEEP_OUTPUT "H200, <date>"   (the commit goes in RESULTS.md)
"""
import sys

src, where = sys.argv[1], sys.argv[2]
text = open(src).read()
rows = text[text.index("table begin\n") + len("table begin\n"):text.index("table end")].rstrip("\n").splitlines()
rows[-1] = rows[-1].rstrip(" \\")
header = "gk/gk_gemm_sm90.cuh"
h = open(header).read()
begin = h.index("/* GK_GEMM_TUNED begin")
end = h.index("/* GK_GEMM_TUNED end */")
block = ("/* GK_GEMM_TUNED begin: written by gk_bench/sweep/gemm_tuned_table.py from gemm_suite_sweep (%s);\n"
         "   X(M, N, K, trans_a, trans_b, tile or model, splits), then the speed against cuBLAS of the\n"
         "   time model's pick -> of this entry's. */\n#ifndef GK_GEMM_TUNED\n#define GK_GEMM_TUNED(X) \\\n%s\n#endif\n"
         % (where, "\n".join(rows)))
open(header, "w").write(h[:begin] + block + h[end:])
print("%s: %d entries (%d measured) from %s" % (header, len(rows), sum("model" not in r for r in rows), src))
