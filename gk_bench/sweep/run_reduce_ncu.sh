#!/bin/bash
# Profiles one launch of each op:shape given (bf16) with ncu: time, DRAM throughput, occupancy,
# issue rate, MUFU use and the main stall reasons. usage: run_reduce_ncu.sh [-Iheaderdir] op:RxC...
set -u
inc=""
case "${1:-}" in -I*) inc=$1; shift ;; esac
dir=$(mktemp -d)
nvcc -std=c++17 -O3 -arch=sm_90 $inc -I. gk_bench/sweep/reduce_probe.cu -o "$dir/probe" || exit 1
m=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
m=$m,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers
m=$m,sm__cycles_active.avg,gpc__cycles_elapsed.max,smsp__issue_active.avg.pct_of_peak_sustained_active
m=$m,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct
for s in long_scoreboard barrier math_pipe_throttle wait; do
    m=$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
ncu --clock-control none --metrics "$m" --csv --page raw "$dir/probe" "$@" 2>&1 | grep -v "^==PROF==" > "$dir/ncu.csv"
python3 - "$dir/ncu.csv" "$m" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr = [i for i, r in enumerate(rows) if r and r[0] == "ID"]
if not hdr: print(open(sys.argv[1]).read()[-3000:]); sys.exit()
h = rows[hdr[0]]
short = lambda n: n.replace("smsp__average_warps_issue_stalled_", "stall_").replace("_per_issue_active.ratio", "").replace(".avg.pct_of_peak_sustained_active", "%").replace(".avg.pct_of_peak_sustained_elapsed", "%")
for r in rows[hdr[0] + 2:]:
    if len(r) != len(h): continue
    d = dict(zip(h, r))
    print(d["Kernel Name"][:40], d["Grid Size"], d["Block Size"])
    print("   " + "  ".join(f"{short(k)}={d[k]}" for k in sys.argv[2].split(",") if k in d))
PY
