#!/usr/bin/env python3
"""The GEMM shape suite: what gk's bf16 GEMM is measured on against cuBLAS, in gk_bench/gemm_bench.cu
(through gk_bench/gemm_suite.h, written by this file) and in compare_gemm.py (which imports it).

  - the Llama-3-8B and Llama-3-70B linear layers (qkv, o, fused gate/up, down) in F.linear's layout
    (NT: x [M, K], w [N, K]) at M = 1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192;
  - squares 1024 .. 16384 in the four layouts (NN, NT, TN, TT);
  - 40 shapes with M, N, K log-uniform in [1, 16384] (N, K rounded to multiples of 8) and 10 with
    odd N and K, NT, drawn with a fixed seed.

    python3 gemm_suite.py --header > ../gemm_suite.h     regenerates the C header
    python3 gemm_suite.py                                lists the suite
"""

import math
import random
import sys

LLAMA = [  # (model, layer, N, K) of y[M, N] = x[M, K] w[N, K]^T
    ("llama3-8b", "qkv", 6144, 4096),
    ("llama3-8b", "o", 4096, 4096),
    ("llama3-8b", "gate/up", 28672, 4096),
    ("llama3-8b", "down", 4096, 14336),
    ("llama3-70b", "qkv", 10240, 8192),
    ("llama3-70b", "o", 8192, 8192),
    ("llama3-70b", "gate/up", 57344, 8192),
    ("llama3-70b", "down", 8192, 28672),
]
LLAMA_M = [1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
SQUARES = [1024, 2048, 4096, 8192, 16384]
LAYOUTS = [(0, 0, "nn"), (0, 1, "nt"), (1, 0, "tn"), (1, 1, "tt")]  # (trans_a, trans_b, name)
SEED = 22


def _log_uniform(rng, lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def _random_shapes():
    rng = random.Random(SEED)
    out = []
    for i in range(40):
        m = max(1, min(16384, round(_log_uniform(rng, 1, 16384))))
        n = max(8, min(16384, 8 * round(_log_uniform(rng, 1, 16384) / 8)))
        k = max(8, min(16384, 8 * round(_log_uniform(rng, 1, 16384) / 8)))
        out.append(("random %d" % i, m, n, k, 0, 1))
    for i in range(10):
        m = max(1, min(16384, round(_log_uniform(rng, 1, 16384))))
        n = min(16383, round(_log_uniform(rng, 1, 16384)) | 1)
        k = min(16383, round(_log_uniform(rng, 1, 16384)) | 1)
        out.append(("odd %d" % i, m, n, k, 0, 1))
    return out


def suite():
    """[(name, m, n, k, trans_a, trans_b)] in a fixed order."""
    out = []
    for model, layer, n, k in LLAMA:
        for m in LLAMA_M:
            out.append(("%s %s" % (model, layer), m, n, k, 0, 1))
    for s in SQUARES:
        for ta, tb, name in LAYOUTS:
            out.append(("square %s" % name, s, s, s, ta, tb))
    return out + _random_shapes()


def header():
    lines = ["// gk_bench/gemm_suite.h - written by gk_bench/compare/gemm_suite.py --header; do not edit.",
             "// The GEMM shape suite (that script's docstring says what it holds): name, M, N, K, trans_a, trans_b.",
             "#pragma once",
             "#include <stdint.h>",
             "struct GkGemmSuiteShape {",
             "    const char *name;",
             "    int64_t m, n, k;",
             "    int ta, tb;",
             "};",
             "static const GkGemmSuiteShape gk_gemm_suite[] = {"]
    for name, m, n, k, ta, tb in suite():
        lines.append('    {"%s", %d, %d, %d, %d, %d},' % (name, m, n, k, ta, tb))
    lines.append("};")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--header"]:
        sys.stdout.write(header())
    else:
        for row in suite():
            print("%-20s M=%-6d N=%-6d K=%-6d trans_a=%d trans_b=%d" % row)
