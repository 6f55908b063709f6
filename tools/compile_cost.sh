#!/bin/bash
# What each header costs to compile: one translation unit per header that defines GK_IMPLEMENTATION
# and includes it (gk_core.cuh and gk_mma.cuh hold no kernels of their own: their contract probe
# TUs instead), compiled for sm_90a as a user would, one after another. Prints a markdown table:
# kernels compiled (ptxas entry functions), wall time and object size.
#
#   tools/compile_cost.sh            (from the repository root; NVCC=/path/to/nvcc to pick one)
#
# Wall times depend on the machine and on whatever else runs on it: the line above the table
# says which nvcc, how many cores and the load average when it started.
set -u
cd "$(dirname "$0")/.."
nvcc=${NVCC:-nvcc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# header label, then the translation unit (a file of the repository, or "impl:<header>")
units=(
    "gk_core.cuh (probe)|gk_tests/contract/core_probe.cu"
    "gk_mma.cuh (probe)|gk_tests/contract/mma_probe.cu"
    "gk_elementwise.cuh|impl:gk_elementwise.cuh"
    "gk_reduce.cuh|impl:gk_reduce.cuh"
    "gk_sgemm.cuh|impl:gk_sgemm.cuh"
    "gk_gemm.cuh + gk_gemm_sm90.cuh|impl:gk_gemm.cuh"
    "gk_attention.cuh + gk_attention_sm90.cuh|impl:gk_attention.cuh"
)

version=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\), V\([0-9.]*\).*/\2/p')
echo "nvcc $version, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
    "nvcc -c -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a"
echo
echo "| header | kernels compiled | wall time (s) | object size (KiB) |"
echo "|---|---|---|---|"
for u in "${units[@]}"; do
    label=${u%%|*} src=${u#*|}
    if [ "${src#impl:}" != "$src" ]; then
        tu="$dir/${src#impl:}.cu"
        printf '#define GK_IMPLEMENTATION\n#include "gk/%s"\n' "${src#impl:}" > "$tu"
    else
        tu=$src
    fi
    obj="$dir/unit.o"
    start=$(date +%s.%N)
    if ! "$nvcc" -c -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I. "$tu" -o "$obj" \
        > "$dir/log" 2>&1; then
        echo "| $label | failed: $(grep -m1 error "$dir/log") | | |"
        continue
    fi
    end=$(date +%s.%N)
    kernels=$(grep -c "Compiling entry function" "$dir/log")
    kib=$(( ($(stat -c %s "$obj") + 1023) / 1024 ))
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    printf '| %s | %d | %s | %d |\n' "$label" "$kernels" "$secs" "$kib"
    rm -f "$obj"
done
