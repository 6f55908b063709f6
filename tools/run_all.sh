#!/bin/bash
# Runs a gk bundle (made by tools/bundle.sh) on a GPU host without Bazel.
#   run_all.sh OUT [--quick] [--no-tests] [--no-sanitizer] [--no-bench] [--no-compare]
# Writes to OUT: env.txt (GPU, driver, commit), tests.log (the GoogleTest binaries and the shell
# tests), sanitizer.log, benches.txt, bench_<name>.json, compare/ (gk against PyTorch: each
# script's table, JSON and CSV; gk_bench/compare/README.md), and summary.txt (one line per step,
# PASS or FAIL; the exit status is non-zero when any step failed).
#
# Every test runs with GK_TEST_REQUIRE_GPU=1: on a GPU host a GPU test that would skip for want of
# a device fails instead. --quick skips the tests named *Huge* (2^28 and 2^31 elements). The
# sanitizer runs skip *Huge* always: under memcheck they would take hours, and the same kernels
# run there at small sizes. memcheck runs with GK_TEST_TAIL_GUARD=0 (tensors end where their
# allocation ends; gk_tests/gk_test.h). The compare scripts need python3 with PyTorch (PYTHON
# overrides the interpreter) and lib/libgk.so.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run_all.sh OUT [--quick] [--no-tests] [--no-sanitizer] [--no-bench] [--no-compare]}
shift
quick=0 tests=1 sanitize=1 bench=1 compare=1
for a in "$@"; do
    case $a in
    --quick) quick=1 ;;
    --no-tests) tests=0 ;;
    --no-sanitizer) sanitize=0 ;;
    --no-bench) bench=0 ;;
    --no-compare) compare=0 ;;
    *) echo "run_all.sh: unknown option $a" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GK_TEST_REQUIRE_GPU=1
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
    [ -e "$t" ] && [ $tests -eq 1 ] || continue
    name=$(basename "$t")
    echo "=== $name" >> "$out/tests.log"
    "$t" --gtest_color=no --gtest_filter="$filter" >> "$out/tests.log" 2>&1
    step "test $name" $?
done

# Shell tests (Bazel sh_test targets, e.g. the C API through ctypes): each shtests/NAME.run starts
# one from its runfiles with the arguments Bazel gives it.
for t in "$here"/shtests/*.run; do
    [ -e "$t" ] && [ $tests -eq 1 ] || continue
    name=$(basename "$t" .run)
    echo "=== $name" >> "$out/tests.log"
    "$t" >> "$out/tests.log" 2>&1
    step "test $name" $?
done

if [ $bench -eq 1 ]; then
    for b in "$here"/bench/*; do
        [ -e "$b" ] || continue
        name=$(basename "$b")
        echo "=== $name" >> "$out/benches.txt"
        "$b" --benchmark_out="$out/bench_$name.json" --benchmark_out_format=json >> "$out/benches.txt" 2>&1
        step "bench $name" $?
    done
fi

# gk through lib/libgk.so against the PyTorch call a user would make, one script a step.
if [ $compare -eq 1 ]; then
    mkdir -p "$out/compare"
    for s in "$here"/compare/compare_*.py; do
        name=$(basename "$s" .py)
        [ "$name" = compare_common ] && continue
        if [ ! -f "$here/lib/libgk.so" ]; then
            echo "no lib/libgk.so in this bundle (tools/bundle.sh found no //gk_tests/c_api:libgk)" | tee "$out/compare/$name.log"
            step "compare $name" 1
            continue
        fi
        PYTHONUNBUFFERED=1 "${PYTHON:-python3}" "$s" --lib "$here/lib/libgk.so" --out "$out/compare" \
            > "$out/compare/$name.log" 2>&1
        step "compare $name" $?
    done
fi

if [ $sanitize -eq 1 ]; then
    if command -v compute-sanitizer > /dev/null; then
        for t in "$here"/tests/*; do
            [ -e "$t" ] || continue
            name=$(basename "$t")
            case $name in *host_test) continue ;; esac # no kernels run there
            echo "=== memcheck $name" >> "$out/sanitizer.log"
            # no guard bytes after a test's tensors: a read past a tensor's end leaves its allocation
            # attention: not the 2^17-key and 4097^2 runs (their CPU reference under memcheck's
            # slowed kernels takes minutes; the same kernels run at the other tests' sizes)
            mc_filter='-*Huge*'
            [ "$name" = attention_gpu_test ] && mc_filter='-*Huge*:AttentionGpu.LongSequences'
            GK_TEST_TAIL_GUARD=0 compute-sanitizer --tool memcheck --error-exitcode 99 "$t" --gtest_color=no \
                --gtest_filter="$mc_filter" >> "$out/sanitizer.log" 2>&1
            step "memcheck $name" $?
            # racecheck where kernels use shared memory, on subsets that run every kernel at small
            # sizes (racecheck is far slower than memcheck):
            # - core, mma: the whole test;
            # - reduce: every block-level variant of the header (rmsnorm bf16 and softmax f32, all
            #   widths);
            # - gemm: GemmGpu.EveryConfigSmall runs every configuration (the mma.sync tiles and the
            #   sm_90a wgmma tiles, swapped and persistent ones too) with each input dtype and
            #   layout at 200 x 264 x 136, K whole and split, persistent grids walking to a second
            #   tile; RowTailsZeroFilled (every configuration and the dispatcher, rows ending
            #   mid-chunk) and SplitPartialRowsOffSixteenBytes (split-K partials stored a value at
            #   a time) are small too. About 15 s under racecheck on an H200 (EveryConfigSplits1And3
            #   alone takes 26 s). racecheck follows the shared-memory loads and stores threads make
            #   (the mma.sync kernels' tiles, the wgmma kernels' epilogue through shared memory and
            #   its named barriers) but not the async proxy: the TMA writes into a stage and wgmma's
            #   reads of it, ordered by mbarriers, are beyond it. So synccheck (barrier use) and
            #   initcheck (reads of global memory never written) run on the same subset.
            rc_filter='' extra_tools=''
            case $name in
            core_gpu_test | mma_gpu_test) rc_filter='-*Huge*' ;;
            reduce_gpu_test) rc_filter='All/RdGpu.WidthsAndRows/rmsnorm_bf16:All/RdGpu.WidthsAndRows/softmax_f32:RdGpuMisc.*' ;;
            gemm_gpu_test) rc_filter='GemmGpu.EveryConfigSmall:GemmGpu.RowTailsZeroFilled:GemmGpu.SplitPartialRowsOffSixteenBytes' extra_tools='synccheck initcheck' ;;
            # attention: every configuration (mma.sync and wgmma, whole and split, Sq 1 and 130,
            # 1000 keys) and the key splits with their combine; racecheck follows the mma.sync
            # kernels' tiles and the wgmma epilogue through shared memory, not TMA or wgmma reads
            attention_gpu_test) rc_filter='AttentionGpu.EveryConfig:AttentionGpu.KeySplits' extra_tools='synccheck initcheck' ;;
            # paged: the whole test (the append shares a token's cos and sin through shared memory;
            # decode's warps each own rows of the ring, waited on a warp at a time, and merge
            # through shared memory after a block barrier)
            paged_gpu_test) rc_filter='-*Huge*' extra_tools='synccheck' ;;
            # quant: every fused configuration on forced warp counts (each warp's own cp.async ring,
            # read back only by the lane that filled it; no block barrier), the dispatcher, G 32,
            # the partials' sum launched dependent on the fused grid
            quant_gpu_test) rc_filter='QuantGpuGemm.EveryConfigAndWarps:QuantGpuGemm.Dispatcher:QuantGpuGemm.Group32:QuantGpuGemm.M3N200K192' extra_tools='synccheck initcheck' ;;
            # fp8: every configuration (wgmma with tensor, row and block scales, the mma.sync ones), whole
            # and in 3 K splits, and the refusals after the device query
            fp8_gpu_test) rc_filter='Fp8Gpu.EveryConfigAndSplits:Fp8Gpu.EmptyAndRefusals' extra_tools='synccheck initcheck' ;;
            esac
            [ -n "$rc_filter" ] || continue
            for tool in racecheck $extra_tools; do
                echo "=== $tool $name" >> "$out/sanitizer.log"
                compute-sanitizer --tool "$tool" --error-exitcode 99 "$t" --gtest_color=no \
                    --gtest_filter="$rc_filter" >> "$out/sanitizer.log" 2>&1
                step "$tool $name" $?
            done
        done
    else
        echo "compute-sanitizer not found: sanitizer runs skipped" | tee -a "$summary"
    fi
fi
echo "--- summary"
cat "$summary"
! grep -q FAIL "$summary"
