#!/bin/bash
# Builds every gk test and benchmark binary, libgk.so and the comparison scripts for a GPU host that
# has no Bazel, into one folder (default: bundle/, ignored by git) with run_all.sh, which runs them
# all and writes logs, benchmark JSON and the comparison tables to a directory of your choice.
#
#   tools/bundle.sh [DIR]                 build (sm_90a only, stripped, static CUDA runtime)
#   DIR/run_all.sh OUT [--quick]          on the GPU host: tests, benches, comparisons, sanitizers
#
# DIR holds:
#   tests/       the GoogleTest binaries (cc_test targets of gk_tests) but the host tests
#   shtests/     the shell tests of gk_tests (sh_test targets; not the contract tests, which need no
#                GPU and ran where Bazel is): NAME/ is the test's runfiles tree, NAME.run starts the
#                test there with the arguments Bazel gives it
#   bench/       the benchmark binaries (cc_binary targets of gk_bench)
#   lib/         libgk.so (//gk_tests/c_api:libgk: every header's implementation with C linkage,
#                for ctypes) and Google Benchmark's shared library (Debian ships it shared)
#   compare/     gk_bench/compare: gk through libgk.so against PyTorch (python3 with torch there)
#   run_all.sh, COMMIT
# The binaries need a CUDA 13 driver; benchmarks that use cuBLAS find libcublas.so.13 on the host.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-bundle}
rm -rf "$dir"
mkdir -p "$dir/tests" "$dir/shtests" "$dir/bench" "$dir/lib"

# libgk.so: the C API as one shared library, built with the rest. Where the target is missing the
# bundle is still made, without it: its compare steps (and a ctypes test, if any) fail on the host.
libgk_label=//gk_tests/c_api:libgk
libgk_so=bazel-bin/gk_tests/c_api/libgk.so
targets=(//gk_tests/... //gk_bench/... "$libgk_label")
have_libgk=1
if ! bazel query "$libgk_label" > /dev/null 2>&1; then
    have_libgk=0
    targets=(//gk_tests/... //gk_bench/...)
    echo "bundle.sh: WARNING: no target $libgk_label in this tree: the bundle gets no lib/libgk.so" >&2
fi

bazel build --config=bundle "${targets[@]}"
tests=$(bazel query 'kind(cc_test, //gk_tests/...)' 2>/dev/null)
benches=$(bazel query 'kind(cc_binary, //gk_bench/...)' 2>/dev/null)
# The host tests (no kernels: CI runs them at every commit) stay out, so that the bundle stays
# under the 64 MiB a GPU host is sent (with them, 67 MiB at 40bc235).
for label in $tests; do
    case $label in *_host_test) continue ;; esac
    path=bazel-bin/$(echo "${label#//}" | tr ':' '/')
    install -m 755 "$path" "$dir/tests/"
done
for label in $benches; do
    path=bazel-bin/$(echo "${label#//}" | tr ':' '/')
    install -m 755 "$path" "$dir/bench/"
done
strip "$dir"/tests/* "$dir"/bench/*
# shared libraries the binaries need that a GPU host will not have (Google Benchmark)
for b in "$dir"/bench/*; do
    ldd "$b" | awk '/libbenchmark/ { print $3 }' | xargs -r -I{} cp -L {} "$dir/lib/"
done
if [ $have_libgk -eq 1 ]; then
    install -m 755 "$libgk_so" "$dir/lib/libgk.so"
    strip --strip-unneeded "$dir/lib/libgk.so" # the C symbols stay (dynamic symbol table)
fi

# Shell tests. `bazel run --script_path` writes how Bazel would run the test: a test runs through
# test-setup.sh, whose last line reads "... test-setup.sh <test> <its arguments, shell-quoted> "$@"",
# from the runfiles tree of workspace TEST_WORKSPACE.
shtests=$(bazel query 'kind(sh_test, //gk_tests/...) except //gk_tests/contract/...' 2>/dev/null)
for label in $shtests; do
    name=$(echo "${label#//}" | tr '/:' '__')
    name=${name#gk_tests_}
    how=$(mktemp)
    bazel run --config=bundle --script_path="$how" "$label"
    line=$(tail -n 1 "$how")
    cmd=${line#*/test-setup.sh }
    cmd=${cmd% \"\$@\"}
    workspace=$(sed -n 's/^ *TEST_WORKSPACE=\([A-Za-z0-9_]*\) .*/\1/p' "$how")
    if [ "$cmd" = "$line" ] || [ -z "$workspace" ]; then
        echo "bundle.sh: cannot read how Bazel runs $label from $how:" >&2
        cat "$how" >&2
        exit 1
    fi
    rm -f "$how"
    cp -rL "bazel-bin/$(echo "${label#//}" | tr ':' '/').runfiles" "$dir/shtests/$name"
    cat > "$dir/shtests/$name.run" << EOF
#!/bin/bash
# $label, as Bazel runs it: in its runfiles, with its arguments.
here=\$(cd "\$(dirname "\$0")" && pwd)
export TEST_SRCDIR=\$here/$name RUNFILES_DIR=\$here/$name TEST_WORKSPACE=$workspace
TEST_TMPDIR=\$(mktemp -d)
export TEST_TMPDIR
cd "\$here/$name/$workspace" && exec ./$cmd "\$@"
EOF
    chmod +x "$dir/shtests/$name.run"
done

cp -r gk_bench/compare "$dir/compare"
rm -rf "$dir/compare/__pycache__"
git rev-parse HEAD > "$dir/COMMIT" 2>/dev/null || echo unknown > "$dir/COMMIT"
if git status --porcelain | grep -q .; then echo "(with uncommitted changes)" >> "$dir/COMMIT"; fi
cp tools/run_all.sh "$dir/run_all.sh"
chmod +x "$dir/run_all.sh"
du -sh "$dir"
echo "bundle ready: $dir (run: $dir/run_all.sh OUT_DIR)"
[ $have_libgk -eq 1 ] || echo "bundle.sh: WARNING: made without lib/libgk.so ($libgk_label missing): compare steps will fail" >&2
