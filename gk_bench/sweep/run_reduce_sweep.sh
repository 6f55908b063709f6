#!/bin/bash
# Builds and runs reduce_sweep.cu once per configuration (on the GPU host: it has nvcc).
# usage: gk_bench/sweep/run_reduce_sweep.sh  (from the repository root)
set -u
# A config may name a folder holding another gk/gk_reduce.cuh (with its gk_core.cuh) to compare
# against, e.g. "-I/tmp/base": it comes before -I. so it wins.
configs=(
    ""
    "-DGK_RD_STREAM_BATCH=4"
    "-DGK_RD_MIN_BLOCKS=4"
)
dir=$(mktemp -d)
for i in "${!configs[@]}"; do
    nvcc -std=c++17 -O3 -arch=sm_90 ${configs[$i]} -I. -Xptxas -v gk_bench/sweep/reduce_sweep.cu -o "$dir/s$i" \
        2> "$dir/s$i.ptxas" &
done
wait
for i in "${!configs[@]}"; do
    spills=$(grep "bytes stack frame" "$dir/s$i.ptxas" | grep -vc " 0 bytes stack frame, 0 bytes spill stores")
    echo "[${configs[$i]:-defaults}] ($spills kernels with a stack frame or spills)"
    "$dir/s$i"
done
