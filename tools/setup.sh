#!/usr/bin/env bash
# gk setup: installs what building and testing gk needs on Debian 12, and nothing else.
#
#   bash tools/setup.sh
#
# Safe to run again: each package is checked with dpkg and only missing ones are installed
# (apt-get update runs once, and only when something is missing). Needs root, or sudo, only
# then. The CUDA toolkit is not a Debian package here: it must already be installed, at
# $GK_CUDA_PATH or /usr/local/cuda.
#
# cuobjdump and nvdisasm, which the contract tests read the SASS with, are not in the toolkit on
# the build machines: where the toolkit lacks them, this script downloads NVIDIA's wheels of them
# from PyPI (pinned by version and hash, with python3 -m pip) and unpacks the two programs into
# $GK_CUDA_BINUTILS, default /opt/gk/cuda-binutils-<version>/bin, where
# third_party/cuda/cuda_configure.bzl looks for them. Bazel itself downloads nothing.
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

# cuobjdump and nvdisasm: NVIDIA's PyPI wheels (the programs are nvidia/cu13/bin/* inside), read
# nvcc 13.0 objects. Keep the default folder in step with GK_CUDA_BINUTILS_DEFAULT in
# third_party/cuda/cuda_configure.bzl.
CUDA_BINUTILS_VERSION=13.2.51
CUDA_BINUTILS_WHEELS=(
    "nvidia-cuda-cuobjdump==$CUDA_BINUTILS_VERSION --hash=sha256:95c69d3ddf0c2c1f535ec44c3433a66aeee19f588d9d22f73356e20b25f12b50"
    "nvidia-cuda-nvdisasm==$CUDA_BINUTILS_VERSION --hash=sha256:5a7acf77c55d6d2911ed6155d4d5bc156ffadf9df7a68a89b0c1155f4b13688c"
)
if [[ -n ${GK_CUDA_BINUTILS:-} ]]; then
    CUDA_BINUTILS=$GK_CUDA_BINUTILS
elif [[ -x $CUDA_PATH/bin/cuobjdump && -x $CUDA_PATH/bin/nvdisasm ]]; then
    CUDA_BINUTILS=$CUDA_PATH/bin  # a full toolkit has them; cuda_configure.bzl then takes these
else
    CUDA_BINUTILS=/opt/gk/cuda-binutils-$CUDA_BINUTILS_VERSION/bin
fi

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

# Both binutils there and runnable (the version is checked where they are ours to replace).
binutils_ok() {
    local t
    for t in cuobjdump nvdisasm; do
        [[ -x $CUDA_BINUTILS/$t ]] || return 1
        if [[ $CUDA_BINUTILS != "$CUDA_PATH/bin" ]]; then
            "$CUDA_BINUTILS/$t" --version 2>/dev/null | grep -q "V$CUDA_BINUTILS_VERSION" || return 1
        else
            "$CUDA_BINUTILS/$t" --version >/dev/null 2>&1 || return 1
        fi
    done
}
need_binutils=0
binutils_ok || need_binutils=1
# Installing them takes pip (Debian's python3-pip, where python3 has none).
if ((need_binutils)) && ! python3 -m pip --version >/dev/null 2>&1; then
    missing+=(python3-pip)
fi

# Runs a command as root: directly, or through sudo.
as_root() {
    if [[ $(id -u) -eq 0 ]]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "$1 needs root ($*); run this script as root, or install sudo"
    fi
}

if ((${#missing[@]} > 0)); then
    echo "gk setup: installing ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive \
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

# cuobjdump and nvdisasm. A folder of our own is replaced whole, so a run that stopped half way
# leaves nothing that passes for installed.
if ((need_binutils)); then
    if [[ $CUDA_BINUTILS == "$CUDA_PATH/bin" ]]; then
        die "cuobjdump or nvdisasm in $CUDA_BINUTILS does not run"
    fi
    echo "gk setup: installing cuobjdump and nvdisasm $CUDA_BINUTILS_VERSION (PyPI wheels) into $CUDA_BINUTILS"
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    printf '%s\n' "${CUDA_BINUTILS_WHEELS[@]}" > "$work/requirements.txt"
    python3 -m pip download -q --no-deps --only-binary=:all: --require-hashes \
        -r "$work/requirements.txt" -d "$work/wheels" ||
        die "pip could not download the cuobjdump and nvdisasm wheels from PyPI"
    for wheel in "$work"/wheels/*.whl; do
        python3 -m zipfile -e "$wheel" "$work/unpacked" || die "could not unpack $wheel"
    done
    for t in cuobjdump nvdisasm; do
        [[ -f $work/unpacked/nvidia/cu13/bin/$t ]] || die "the wheels hold no nvidia/cu13/bin/$t"
    done
    as_root mkdir -p "$(dirname "$CUDA_BINUTILS")"
    as_root rm -rf "$CUDA_BINUTILS.new"
    as_root mkdir -p "$CUDA_BINUTILS.new"
    as_root install -m 0755 "$work"/unpacked/nvidia/cu13/bin/{cuobjdump,nvdisasm} "$CUDA_BINUTILS.new/"
    as_root install -m 0644 "$work"/unpacked/nvidia_cuda_cuobjdump-*.dist-info/licenses/License.txt \
        "$CUDA_BINUTILS.new/License.txt"
    as_root rm -rf "$CUDA_BINUTILS"
    as_root mv "$CUDA_BINUTILS.new" "$CUDA_BINUTILS"
    binutils_ok || die "cuobjdump or nvdisasm in $CUDA_BINUTILS does not run"
    echo "gk setup: cuobjdump, nvdisasm: installed in $CUDA_BINUTILS"
else
    echo "gk setup: cuobjdump, nvdisasm: present in $CUDA_BINUTILS"
fi
# They read what this nvcc compiles: one small kernel, disassembled.
probe=$(mktemp -d)
printf '__global__ void gk_setup_probe(float *p) { p[threadIdx.x] = 1.0f; }\n' > "$probe/probe.cu"
if ! "$NVCC" -c -arch=sm_90 "$probe/probe.cu" -o "$probe/probe.o" ||
    ! NVDISASM_PATH=$CUDA_BINUTILS "$CUDA_BINUTILS/cuobjdump" -sass "$probe/probe.o" | grep -q 'STG'; then
    rm -rf "$probe"
    die "cuobjdump -sass in $CUDA_BINUTILS cannot read an object nvcc compiled"
fi
rm -rf "$probe"
if [[ $CUDA_BINUTILS != "$CUDA_PATH/bin" && $CUDA_BINUTILS != "/opt/gk/cuda-binutils-$CUDA_BINUTILS_VERSION/bin" ]]; then
    echo "gk setup: Bazel finds them there only with GK_CUDA_BINUTILS=$CUDA_BINUTILS in its environment" \
        "(or --repo_env=GK_CUDA_BINUTILS=$CUDA_BINUTILS)"
fi

echo "gk setup: ready"
