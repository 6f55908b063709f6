#!/usr/bin/env bash
# Runs the drop-in example built by //examples:drop_in_build and passes its exit code through.
# Usage: run_drop_in.sh path/to/drop_in
set -u
if [[ $# -ne 1 || ! -x $1 ]]; then
    echo "run_drop_in.sh: expected the path of the drop_in binary, got: $*" >&2
    exit 2
fi
exec "$1"
