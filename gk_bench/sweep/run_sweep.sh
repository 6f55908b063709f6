#!/bin/bash
# Builds and runs elementwise_sweep.cu once per configuration (on the GPU host: it has nvcc).
# usage: gk_bench/sweep/run_sweep.sh  (from the repository root)
set -u
configs=(
    "-DGK_EW_UNROLL=4"
    "-DGK_EW_UNROLL=2"
)
dir=$(mktemp -d)
for i in "${!configs[@]}"; do
    nvcc -std=c++17 -O3 -arch=sm_90 -I. ${configs[$i]} gk_bench/sweep/elementwise_sweep.cu -o "$dir/s$i" &
done
wait
for i in "${!configs[@]}"; do
    echo "[${configs[$i]}]"
    "$dir/s$i"
done
