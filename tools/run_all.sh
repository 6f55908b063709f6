#!/bin/bash
# Runs a gk bundle (made by tools/bundle.sh) on a GPU host without Bazel.
#   run_all.sh OUT [--quick] [--no-sanitizer] [--no-bench]
# Writes to OUT: env.txt (GPU, driver, commit), tests.log, sanitizer.log, benches.txt,
# bench_<name>.json, and summary.txt (one line per step, PASS or FAIL). --quick skips the
# tests named *Huge* (2^28 and 2^31 elements). The sanitizer runs skip *Huge* always: under
# memcheck they would take hours, and the same kernels run there at small sizes. memcheck runs
# with GK_TEST_TAIL_GUARD=0 (tensors end where their allocation ends; gk_tests/gk_test.h).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run_all.sh OUT [--quick] [--no-sanitizer] [--no-bench]}
shift
quick=0 sanitize=1 bench=1
for a in "$@"; do
    case $a in
    --quick) quick=1 ;;
    --no-sanitizer) sanitize=0 ;;
    --no-bench) bench=0 ;;
    esac
done
mkdir -p "$out"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
summary=$out/summary.txt
: > "$summary"
step() { # name rc
    local verdict=PASS
    [ "$2" -eq 0 ] || verdict="FAIL (exit $2)"
    printf "%-48s %s\n" "$1" "$verdict" | tee -a "$summary"
}

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(cat "$here/COMMIT")"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
} > "$out/env.txt"
cat "$out/env.txt"

filter='*'
[ $quick -eq 1 ] && filter='-*Huge*'
for t in "$here"/tests/*; do
    name=$(basename "$t")
    echo "=== $name" >> "$out/tests.log"
    "$t" --gtest_color=no --gtest_filter="$filter" >> "$out/tests.log" 2>&1
    step "test $name" $?
done

if [ $bench -eq 1 ]; then
    for b in "$here"/bench/*; do
        name=$(basename "$b")
        echo "=== $name" >> "$out/benches.txt"
        "$b" --benchmark_out="$out/bench_$name.json" --benchmark_out_format=json >> "$out/benches.txt" 2>&1
        step "bench $name" $?
    done
fi

if [ $sanitize -eq 1 ]; then
    if command -v compute-sanitizer > /dev/null; then
        for t in "$here"/tests/*; do
            name=$(basename "$t")
            case $name in *host_test) continue ;; esac # no kernels run there
            echo "=== memcheck $name" >> "$out/sanitizer.log"
            # no guard bytes after a test's tensors: a read past a tensor's end leaves its allocation
            GK_TEST_TAIL_GUARD=0 compute-sanitizer --tool memcheck --error-exitcode 99 "$t" --gtest_color=no \
                --gtest_filter='-*Huge*' >> "$out/sanitizer.log" 2>&1
            step "memcheck $name" $?
            # racecheck where kernels use shared memory: every block-level variant of the reduce
            # header runs in the filtered subset (rmsnorm bf16 and softmax f32, all widths)
            rc_filter=
            case $name in
            core_gpu_test | mma_gpu_test) rc_filter='-*Huge*' ;;
            reduce_gpu_test) rc_filter='All/RdGpu.WidthsAndRows/rmsnorm_bf16:All/RdGpu.WidthsAndRows/softmax_f32:RdGpuMisc.*' ;;
            esac
            if [ -n "$rc_filter" ]; then
                echo "=== racecheck $name" >> "$out/sanitizer.log"
                compute-sanitizer --tool racecheck --error-exitcode 99 "$t" --gtest_color=no \
                    --gtest_filter="$rc_filter" >> "$out/sanitizer.log" 2>&1
                step "racecheck $name" $?
            fi
        done
    else
        echo "compute-sanitizer not found: sanitizer runs skipped" | tee -a "$summary"
    fi
fi
echo "--- summary"
cat "$summary"
! grep -q FAIL "$summary"
