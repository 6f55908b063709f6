#!/bin/bash
# Builds and runs reduce_sweep.cu once per configuration (on the GPU host: it has nvcc).
# usage: gk_bench/sweep/run_reduce_sweep.sh  (from the repository root)
set -u
configs=(
    ""
    "-DGK_RD_MIN_BLOCKS=3"
    "-DGK_RD_MIN_BLOCKS=6"
    "-DGK_RD_SLOTS=8 -DGK_RD_MIN_BLOCKS=2"
    "-DGK_RD_STREAM_BATCH=4"
)
dir=$(mktemp -d)
for i in "${!configs[@]}"; do
    nvcc -std=c++17 -O3 -arch=sm_90 -I. -Xptxas -v ${configs[$i]} gk_bench/sweep/reduce_sweep.cu -o "$dir/s$i" \
        2> "$dir/s$i.ptxas" &
done
wait
for i in "${!configs[@]}"; do
    spills=$(grep "bytes stack frame" "$dir/s$i.ptxas" | grep -vc " 0 bytes stack frame, 0 bytes spill stores")
    echo "[${configs[$i]:-defaults}] ($spills kernels with a stack frame or spills)"
    "$dir/s$i"
done
