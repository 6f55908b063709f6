#!/usr/bin/env bash
# The README's commands, run where a project would run them: gk's headers copied to vendor/gk/ of
# a fresh folder, the sources beside it, nothing of this repository on the include path.
#   from_a_copy_test.sh NVCC_DIR SOURCES... HEADERS...
# C++ (drop_in.cu), C (plain_c.c against gk_impl.o) and Python (ctypes_add.py against
# libgk.so). Without a GPU the programs show the error path and exit 0.
set -euo pipefail
cuda=$(cd "$1/.." && pwd)
shift
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/gk_copy.XXXXXX")
mkdir -p "$work/vendor/gk" "$work/src"
for f in "$@"; do
    case $f in
    *.cuh) cp "$f" "$work/vendor/gk/" ;;
    *) cp "$f" "$work/src/" ;;
    esac
done
cd "$work/src"
nvcc=$cuda/bin/nvcc
run() { echo "+ $*"; "$@"; }

# C++: one .cu file that includes the header and its implementation
run "$nvcc" -std=c++17 -O3 -arch=sm_90a -I ../vendor/gk drop_in.cu -o drop_in
run ./drop_in

# C: the implementation in an object nvcc builds, the program built by gcc as C
run "$nvcc" -c -O3 -arch=sm_90a -Xcompiler -fPIC -I ../vendor/gk gk_impl.cu -o gk_impl.o
run gcc -std=c11 -O2 -Wall -Wextra -pedantic -Werror -I ../vendor/gk -I "$cuda/include" -c plain_c.c -o plain_c.o
run g++ plain_c.o gk_impl.o -L "$cuda/lib64" -lcudart_static -ldl -lrt -lpthread -o plain_c
run ./plain_c

# Python: the same implementation as a shared library, loaded by ctypes
run "$nvcc" -shared -O3 -arch=sm_90a -Xcompiler -fPIC -I ../vendor/gk gk_impl.cu -o libgk.so
run python3 ctypes_add.py ./libgk.so
echo "from_a_copy_test: every command of the README ran from a copy of the headers"
