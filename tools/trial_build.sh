#!/bin/bash
# Builds programs of this tree (a probe of gk_bench/sweep, a GPU test of gk_tests) at this tree and
# with trial commits' changes applied on it, for a GPU host without Bazel, so that the builds can
# be timed side by side in one call. Into DIR (default bundle_trial/, ignored by git):
#   one stripped sm_90a binary a variant, run.sh, VARIANTS (what each one is), COMMIT, and all of
#   it again as DIR/trial.tar.xz, the one file to carry (a call carries 64 MiB with the tree; the
#   binaries that link cuBLAS are 10 MB each, about a tenth of that compressed)
#
#   tools/trial_build.sh DIR 'NAME|REV|PROGRAM|NVCC_FLAGS' ...
#     NAME        the binary's name; a name ending in _test runs once, the others every round
#     REV         a commit whose change (git show REV) is applied on this tree; empty: the tree
#     PROGRAM     the .cu file, from the repository root
#     NVCC_FLAGS  more nvcc flags (-D...), may be empty; words as the shell splits them, so a
#                 macro with spaces is quoted inside the spec. nvcc splits a -D value at its
#                 commas: a configuration list goes in a header, given as --pre-include FILE
#   DIR/run.sh OUT [ROUNDS [NAME...]]   on the GPU host: the tests once, then ROUNDS rounds (default
#                             2) of every timing binary in the order given (each given its name as
#                             argv[1]); NAME.txt each, in one file OUT/trial.tgz (a call brings back
#                             8 files). NAMEs: only those (a call's time limit)
#   The call carries DIR/trial.tar.xz alone (carry names the file) and runs
#     cd DIR && tar xJf trial.tar.xz && cd .. && DIR/run.sh $OUT 3
#
# e.g. the mma.sync k-loop against a trial that allows more stages, the probe's list with them:
#   p=gk_bench/sweep/gemm_mma_sync_probe.cu; no_wg="'-DGK_GEMM_WG_CONFIGS(X)='"
#   tools/trial_build.sh bundle_trial "shipped||$p|$no_wg" "mbar|9ec59e1|$p|$no_wg -DGK_PROBE_STAGES"
# A program of gk_tests/ links GoogleTest and cuBLAS, a probe that includes cublas_v2.h cuBLAS.
# Builds run two at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(realpath -m "${1:-bundle_trial}")
shift || true
[ $# -gt 0 ] || { sed -n '2,20p' "$0"; exit 2; }
rm -rf "$dir"
mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git rev-parse HEAD > "$dir/COMMIT"
git status --short -- gk gk_bench gk_tests >> "$dir/COMMIT"
names=()
i=0
for spec in "$@"; do
    IFS='|' read -r name rev program flags <<< "$spec"
    [ -n "$name" ] && [ -n "$program" ] || { echo "trial_build.sh: bad spec '$spec'" >&2; exit 2; }
    src="$work/$name"
    mkdir -p "$src"
    tar -c --exclude=gk_bench/results gk gk_bench gk_tests | tar -x -C "$src"
    if [ -n "$rev" ]; then
        git show --format= "$rev" -- gk gk_bench gk_tests | (cd "$src" && git apply) ||
            { echo "trial_build.sh: $rev does not apply on this tree" >&2; exit 1; }
    fi
    libs=()
    if [[ $program == gk_tests/* ]]; then
        libs=(/usr/lib/x86_64-linux-gnu/libgtest.a /usr/lib/x86_64-linux-gnu/libgtest_main.a -lpthread -lcublas)
    elif grep -q 'cublas_v2.h' "$src/$program"; then
        libs=(-lcublas)
    fi
    eval "extra=($flags)"
    (cd "$src" && nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -cudart static \
        -Xcompiler -static-libstdc++ -Xptxas -warn-spills -I. "${extra[@]}" "$program" -o "$dir/$name" "${libs[@]}" \
        > "$dir/$name.build.log" 2>&1 && strip "$dir/$name") &
    printf '%s\t%s\t%s\t%s\n' "$name" "${rev:-this tree}" "$program" "$flags" >> "$dir/VARIANTS"
    names+=("$name")
    i=$((i + 1))
    if [ $((i % 2)) -eq 0 ]; then wait; fi
done
wait
for name in "${names[@]}"; do
    [ -x "$dir/$name" ] || { echo "trial_build.sh: $name failed to build: $dir/$name.build.log" >&2; exit 1; }
    if grep -q 'spill' "$dir/$name.build.log"; then echo "trial_build.sh: $name spills (see $dir/$name.build.log)" >&2; fi
done
cat > "$dir/run.sh" << EOF
#!/bin/bash
# Runs the trial builds (tools/trial_build.sh): tests once, the other binaries in turns.
set -u
cd "\$(dirname "\$0")"
dest=\${1:?usage: run.sh OUT [ROUNDS [NAME...]]}
rounds=\${2:-2}
shift 2 2> /dev/null || shift
out=\$(mktemp -d)
mkdir -p "\$dest"
trap 'tar czf "\$dest/trial.tgz" -C "\$out" .' EXIT
cp VARIANTS COMMIT "\$out/"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "\$out/gpu.txt" 2>&1 || true
names=(${names[*]})
[ \$# -gt 0 ] && names=("\$@")
for n in "\${names[@]}"; do
    case \$n in *_test) GK_TEST_REQUIRE_GPU=1 ./\$n > "\$out/\$n.txt" 2>&1; echo "\$n: exit \$?" | tee -a "\$out/summary.txt" ;; esac
done
for r in \$(seq 1 "\$rounds"); do
    for n in "\${names[@]}"; do
        case \$n in *_test) continue ;; esac
        echo "# round \$r" >> "\$out/\$n.txt"
        ./\$n "\$n" >> "\$out/\$n.txt" 2>&1
        echo "\$n round \$r: exit \$?" >> "\$out/summary.txt"
    done
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "\$out/gpu.txt" 2>&1 || true
cat "\$out/summary.txt"
EOF
chmod +x "$dir/run.sh"
# (written outside DIR, then moved in: tar fails on a folder that changes while it reads it)
(cd "$dir" && tar cf - --exclude=trial.tar.xz . | xz -T2 -6 > "$work/trial.tar.xz") && mv "$work/trial.tar.xz" "$dir/"
echo "trial_build.sh: ${#names[@]} builds in $dir; on the GPU host: $dir/run.sh OUT [ROUNDS [NAME...]]"
