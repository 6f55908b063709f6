#!/bin/bash
# Builds every gk test and benchmark binary for a GPU host that has no Bazel, into one folder
# (default: bundle/, ignored by git) with run_all.sh, which runs them all and writes logs and
# benchmark JSON to a directory of your choice.
#
#   tools/bundle.sh [DIR]                 build (sm_90 only, stripped, static CUDA runtime)
#   DIR/run_all.sh OUT [--quick]          on the GPU host: tests, tests under compute-sanitizer, benches
#
# The binaries need a CUDA 13 driver; benchmarks that use cuBLAS find libcublas.so.13 on the host.
# Google Benchmark is a shared library on Debian: it travels in DIR/lib.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-bundle}
rm -rf "$dir"
mkdir -p "$dir/tests" "$dir/bench" "$dir/lib"

bazel build --config=bundle //gk_tests/... //gk_bench/...
tests=$(bazel query 'kind(cc_test, //gk_tests/...)' 2>/dev/null)
benches=$(bazel query 'kind(cc_binary, //gk_bench/...)' 2>/dev/null)
for label in $tests; do
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
git rev-parse HEAD > "$dir/COMMIT" 2>/dev/null || echo unknown > "$dir/COMMIT"
git status --porcelain | grep -q . && echo "(with uncommitted changes)" >> "$dir/COMMIT" || true
cp tools/run_all.sh "$dir/run_all.sh"
chmod +x "$dir/run_all.sh"
du -sh "$dir"
echo "bundle ready: $dir (run: $dir/run_all.sh OUT_DIR)"
