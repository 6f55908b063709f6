#!/bin/bash
# Runs every comparison script here (compare_*.py: gk through libgk.so against the PyTorch call a
# user would make), each in a process of its own, on a GPU host with PyTorch.
#
#   run_all.sh OUT [--lib PATH] [--dry-run] [other options, passed to every script]
#
# Writes OUT/<script>.log (the printed table), OUT/<script>.json and OUT/<script>.csv (the rows).
# --lib defaults to ../lib/libgk.so (a bundle's layout). Exits non-zero when a script failed (a
# gk error, a result that does not match torch's). PYTHON overrides the interpreter (python3).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run_all.sh OUT [--lib PATH] [--dry-run] [script options]}
shift
lib=$(dirname "$here")/lib/libgk.so
args=()
while [ $# -gt 0 ]; do
    case $1 in
    --lib) lib=${2:?--lib needs a path}; shift 2 ;;
    *) args+=("$1"); shift ;;
    esac
done
mkdir -p "$out"
status=0
for script in "$here"/compare_*.py; do
    [ "$(basename "$script")" = compare_common.py ] && continue
    name=$(basename "$script" .py)
    PYTHONUNBUFFERED=1 "${PYTHON:-python3}" "$script" --lib "$lib" --out "$out" "${args[@]}" 2>&1 | tee "$out/$name.log"
    rc=${PIPESTATUS[0]}
    echo "$name: exit $rc"
    [ "$rc" -eq 0 ] || status=1
done
exit $status
