#!/usr/bin/env bash
# gk setup: installs what building and testing gk needs on Debian 12, and nothing else.
#
#   bash tools/setup.sh
#
# Safe to run again: each package is checked with dpkg and only missing ones are installed
# (apt-get update runs once, and only when something is missing). Needs root, or sudo, only
# then. The CUDA toolkit is not a Debian package here: it must already be installed, at
# $GK_CUDA_PATH or /usr/local/cuda.
set -euo pipefail

# Debian packages gk's offline Bazel workspace uses (see WORKSPACE and third_party/).
PACKAGES=(
    bazel-bootstrap   # Bazel 4.2.3, the `bazel` command
    bazel-rules-java  # /usr/share/bazel/rules/java, the local rules_java in WORKSPACE
    googletest        # GoogleTest sources
    libgtest-dev      # GoogleTest headers and static libraries (@googletest)
    libbenchmark-dev  # Google Benchmark (@benchmark)
)

CUDA_PATH="${GK_CUDA_PATH:-/usr/local/cuda}"
RULES_JAVA=/usr/share/bazel/rules/java

die() {
    echo "gk setup: error: $*" >&2
    exit 1
}

installed() {
    dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed'
}

# What is missing, and what was there already.
missing=()
for pkg in "${PACKAGES[@]}"; do
    installed "$pkg" || missing+=("$pkg")
done
# g++ (gcc's C++ compiler: Bazel's C++ toolchain and nvcc's host compiler) is usually there.
command -v g++ >/dev/null 2>&1 || missing+=(g++)

if ((${#missing[@]} > 0)); then
    if [[ $(id -u) -eq 0 ]]; then
        as_root=()
    elif command -v sudo >/dev/null 2>&1; then
        as_root=(sudo)
    else
        die "missing ${missing[*]}; run this script as root, or install sudo"
    fi
    echo "gk setup: installing ${missing[*]}"
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# One line per item: "installed" if this run installed it, else "present"; check each now works.
report() {
    if [[ " ${missing[*]} " == *" $1 "* ]]; then
        echo "gk setup: $1: installed"
    else
        echo "gk setup: $1: present"
    fi
}
for pkg in "${PACKAGES[@]}"; do
    installed "$pkg" || die "$pkg is still not installed"
    report "$pkg"
done
command -v g++ >/dev/null 2>&1 || die "g++ is still not on PATH"
report g++

command -v bazel >/dev/null 2>&1 || die "no bazel command after installing bazel-bootstrap"
[[ -d $RULES_JAVA ]] || die "$RULES_JAVA is missing (package bazel-rules-java); WORKSPACE needs it"
echo "gk setup: $RULES_JAVA: present"

# The CUDA toolkit (nvcc 13) comes from NVIDIA, not from Debian's archive.
NVCC="$CUDA_PATH/bin/nvcc"
if [[ ! -x $NVCC ]]; then
    die "no nvcc at $NVCC. The CUDA toolkit is not a Debian package here: install CUDA 13" \
        "(to /usr/local/cuda), or set GK_CUDA_PATH to the toolkit root if it is elsewhere."
fi
echo "gk setup: nvcc: present at $NVCC ($("$NVCC" --version | grep -o 'release .*' || echo 'version unknown'))"

echo "gk setup: ready"
