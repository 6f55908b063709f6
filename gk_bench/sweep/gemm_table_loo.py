#!/usr/bin/env python3
"""How well the dispatcher's measured table carries to shapes off the suite: from gemm_suite_sweep's
output, each suite shape is looked up in the table without its own entry (leave one out), as
gk_gemm_tuned_pick does (nearest entry within 1 in log2 distance, +1/4 for another layout, its K
splits spread over this shape's tiles), and the sweep's time for that pick is set against the time
model's. Prints the geometric mean of (time model / pick) in and out of sample and the worst.

    python3 gk_bench/sweep/gemm_table_loo.py SWEEP_OUTPUT
"""
import math
import re
import sys

src = open(sys.argv[1]).read()
rows, shapes = {}, {}
for line in src.splitlines():
    m = re.match(r"row (\d+) .*? cfg \d+ gk_gemm_bf16_(\S+) splits (\d+): ([\d.]+) us", line)
    if m:
        rows.setdefault(int(m.group(1)), {})[(m.group(2), int(m.group(3)))] = float(m.group(4))
    m = re.match(r"best (\d+) .*? (N\w|T\w) (\d+)x(\d+)x(\d+): cuBLAS [\d.]+ us, dispatcher ([\d.]+)", line)
    if m:
        shapes[int(m.group(1))] = dict(lay=m.group(2), m=int(m.group(3)), n=int(m.group(4)), k=int(m.group(5)),
                                       model=float(m.group(6)))
table = []
for line in src[src.index("table begin"):src.index("table end")].splitlines()[1:]:
    m = re.match(r"\s+X\((\d+), (\d+), (\d+), (\d), (\d), (\S+), (\d+)\)", line)
    table.append(dict(m=int(m.group(1)), n=int(m.group(2)), k=int(m.group(3)), lay="NT"[int(m.group(4))] + "NT"[int(m.group(5))],
                      tile=m.group(6), s=int(m.group(7))))


def tile_dims(tile):
    m = re.match(r"(?:wg)?(\d+)x(\d+)x", tile)
    return int(m.group(1)), int(m.group(2))


def ceil_div(a, b):
    return -(-a // b)


def speed(i, leave_out):
    q = shapes[i]
    best, best_d = -1, 1.0
    for j, e in enumerate(table):
        if leave_out and j == i:
            continue
        d = (abs(math.log2(q["m"] / e["m"])) + abs(math.log2(q["n"] / e["n"])) + abs(math.log2(q["k"] / e["k"])) +
             (0.25 if e["lay"] != q["lay"] else 0.0))
        if d <= best_d and (d < best_d or best < 0):
            best, best_d = j, d
    if best < 0 or table[best]["tile"] == "model":
        return 1.0
    e = table[best]
    bm, bn = tile_dims(e["tile"])
    te, tq = ceil_div(e["m"], bm) * ceil_div(e["n"], bn), ceil_div(q["m"], bm) * ceil_div(q["n"], bn)
    s = min(max(1, (e["s"] * te + tq // 2) // tq), 16, max(q["k"] // 512, 1))
    ran = sorted((x for (t, x) in rows.get(i, {}) if t == e["tile"]), key=lambda x: abs(x - s))
    return q["model"] / rows[i][(e["tile"], ran[0])] if ran else 1.0


for leave_out in (False, True):
    v = [speed(i, leave_out) for i in shapes]
    print("%s: time model / table pick, geometric mean %.4f, worst %.3f over %d shapes" %
          ("leave one out" if leave_out else "in sample", math.exp(sum(map(math.log, v)) / len(v)), min(v), len(v)))
