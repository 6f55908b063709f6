#!/usr/bin/env python3
"""The dispatcher's measured table from several gemm_suite_sweep runs, when no one run timed every
configuration of the build: each run's times are taken relative to the cuBLAS time of the same run
and shape, so runs of different days compare. Later files win for a configuration they timed;
RENAME maps names of trial builds to the shipped ones. A shape's entry names its fastest
configuration and splits where that beats the time model's pick (MODEL_PICKS: lines "index name
splits", as the dispatcher plans each suite shape without the table) by 5% or more, or where the
pick was not timed; else "model". Prints the lines gemm_tuned_table.py splices in, between "table
begin" and "table end". A pick the rows did not time (or MODEL_PICKS "-") has the speed of each
run's own table line (the dispatcher without the table, timed on its own). --mean:
a configuration's speed is its mean over the runs that timed it (rounds of one build: less of the
noise a 5% rule sees), not the last run's.

    python3 gk_bench/sweep/gemm_table_merge.py MODEL_PICKS SWEEP_OUT... [--rename OLD=NEW ...] [--keep NAME ...] [--mean]
"""
import re
import sys

args = sys.argv[1:]
picks_file, files, rename, keep, mean = args[0], [], {}, None, False
i = 1
while i < len(args):
    if args[i] == "--mean":
        mean = True
        i += 1
    elif args[i] == "--rename":
        old, new = args[i + 1].split("=")
        rename[old] = new
        i += 2
    elif args[i] == "--keep":
        keep = set(args[i + 1].split(","))
        i += 2
    else:
        files.append(args[i])
        i += 1
picks = {}
if picks_file != "-":
    for line in open(picks_file):
        idx, name, splits = line.split()
        picks[int(idx)] = (name.replace("gk_gemm_bf16_", ""), int(splits))
speed, shapes, model_runs = {}, {}, {}
for f in files:
    order, model_speeds = [], []  # a run's shapes in order ("best" lines) and its table lines' model speeds
    for line in open(f):
        m = re.match(r"best (\d+) ", line)
        if m:
            order.append(int(m.group(1)))
        m = re.match(r" +X\(.*\) /\* .*: ([\d.]+)x -> [\d.]+x cuBLAS \*/", line)
        if m:
            model_speeds.append(float(m.group(1)))
        m = re.match(r"row (\d+) (.*?) (N\w|T\w) (\d+)x(\d+)x(\d+) cfg \d+ gk_gemm_bf16_(\S+) splits (\d+): ([\d.]+) us "
                     r"\(cuBLAS ([\d.]+)\)", line)
        if not m:
            continue
        i = int(m.group(1))
        tile = rename.get(m.group(7), m.group(7))
        if keep is not None and tile not in keep:
            continue
        shapes[i] = (m.group(2), m.group(3), int(m.group(4)), int(m.group(5)), int(m.group(6)))
        runs = speed.setdefault(i, {}).setdefault((tile, int(m.group(8))), [])
        if not mean:
            del runs[:]
        runs.append(float(m.group(10)) / float(m.group(9)))
    for i, v in zip(order, model_speeds):
        model_runs.setdefault(i, []).append(v)
speed = {i: {c: sum(v) / len(v) for c, v in cs.items()} for i, cs in speed.items()}
print("table begin")
for i in sorted(shapes):
    name, lay, m, n, k = shapes[i]
    (tile, splits), best = max(speed[i].items(), key=lambda kv: kv[1])
    model = speed[i].get(picks[i]) if i in picks else None
    if model is None and i in model_runs:  # the pick's own time, where the rows did not time it
        model = sum(model_runs[i]) / len(model_runs[i])
    named = model is None or best >= model * 1.05
    print("    X(%d, %d, %d, %d, %d, %s, %d) /* %s %s: %s -> %.3fx cuBLAS */ \\"
          % (m, n, k, lay[0] == "T", lay[1] == "T", tile if named else "model", splits if named else 0, name, lay,
             "%.3fx" % model if model is not None else "untimed", best if named else model))
print("table end")
