"""gk's CUDA rules: nvcc compiles .cu files in genrules; cc rules link the objects.

The target architectures come from `--define=GK_CUDA_ARCHS=80,90` (set in .bazelrc, a comma
list of compute capabilities, e.g. 90a). Each .cu is compiled whole (no relocatable device code),
so no device-link step is needed, and linked against the static CUDA runtime.
"""

load("@local_cuda//:defs.bzl", "CUDA_BINUTILS", "CUDA_PATH")

NVCC = CUDA_PATH + "/bin/nvcc"

# Flags every gk compile shares. -lineinfo costs nothing at run time and lets ncu map SASS to source.
NVCC_FLAGS = "-std=c++17 -O3 -lineinfo -I. -Xcompiler -Wall,-Wno-unused-function"

# Shell snippet: turns $(GK_CUDA_ARCHS) into -gencode flags in $$G, code `code` ("sm": SASS for
# each architecture; "compute": PTX only, the same __CUDA_ARCH_LIST__ and host code, no ptxas,
# which is most of a kernel header's compile time, for binaries that launch no kernel).
def _gencode(code):
    return 'G=""; for a in $$(echo "$(GK_CUDA_ARCHS)" | tr "," " "); do G="$$G -gencode=arch=compute_$$a,code=%s_$$a"; done; ' % code

_GENCODE = _gencode("sm")

# PTX that no test runs need not be optimized: NVVM at -O1 took gemm_host_test's compile from 141 s
# to 97 on a 2-core machine, each beside another compile (-O0 was slower, 155 s, and took 3.5 GB
# of memory). The host code is the same.
PTX_ONLY_FLAGS = " -Xcicc -O1"

# Each nvcc gets a temp dir of its own: inside Bazel's sandbox every action's nvcc runs as PID 2,
# and nvcc names its temp files by PID, so two parallel compiles sharing /tmp clobbered each
# other ("cannot open module id file /tmp/tmpxft_00000002_...").
NVCC_OWN_TMPDIR = 'export TMPDIR=$$(mktemp -d); trap "rm -rf $$TMPDIR" EXIT; '

def _obj_name(name, src):
    return "_objs/%s/%s.o" % (name, src.replace("/", "_").rsplit(".", 1)[0])

def gk_cuda_library(name, srcs, hdrs = [], deps = [], copts = "", ptx_only = False, **kwargs):
    """Compiles each .cu in srcs with nvcc; the objects are always linked (tests register statically).

    ptx_only: device code as PTX only (binaries that launch no kernel: the host tests)."""
    gencode, flags = (_gencode("compute"), NVCC_FLAGS + PTX_ONLY_FLAGS) if ptx_only else (_GENCODE, NVCC_FLAGS)
    objs = []
    for src in srcs:
        obj = _obj_name(name, src)
        native.genrule(
            name = name + "_nvcc_" + src.replace("/", "_").replace(".", "_"),
            srcs = [src] + hdrs,
            outs = [obj],
            cmd = NVCC_OWN_TMPDIR + gencode + NVCC + " -c " + flags + " " + copts + " $$G $(location " + src + ") -o $@",
            message = "nvcc " + src,
        )
        objs.append(obj)
    native.cc_library(
        name = name,
        srcs = objs,
        alwayslink = 1,
        linkstatic = 1,
        deps = deps + ["@local_cuda//:cudart_static"],
        **kwargs
    )

def gk_cuda_test(name, srcs, hdrs = [], deps = [], copts = "", data = [], args = [], tags = [], size = "small",
                 ptx_only = False, **kwargs):
    """A GoogleTest binary whose sources are .cu files (host tests and GPU tests alike)."""
    gk_cuda_library(name = name + "_lib", srcs = srcs, hdrs = hdrs, copts = copts, ptx_only = ptx_only, testonly = 1)
    native.cc_test(
        name = name,
        deps = [name + "_lib"] + deps + ["@googletest//:gtest_main"],
        linkstatic = 1,
        data = data,
        args = args,
        tags = tags,
        size = size,
        **kwargs
    )

def gk_cuda_binary(name, srcs, hdrs = [], deps = [], copts = "", linkopts = [], **kwargs):
    """A plain executable (benchmarks) from .cu files."""
    gk_cuda_library(name = name + "_lib", srcs = srcs, hdrs = hdrs, copts = copts)
    native.cc_binary(
        name = name,
        deps = [name + "_lib"] + deps,
        linkstatic = 1,
        linkopts = linkopts,
        **kwargs
    )

# Drops cuobjdump -sass's encoding lines and columns: the instructions stay, at a quarter of the size.
_SASS_COMPACT = "sed -E '/^\\s*\\/\\* 0x[0-9a-f]{16} \\*\\/\\s*$$/d; s/\\s*\\/\\* 0x[0-9a-f]{16} \\*\\/\\s*$$//'"

# Fails the contract compile, saying what to do, unless CUDA_BINUTILS holds cuobjdump and nvdisasm.
# Checked on every run, not when the repository was configured, so installing them later is enough.
_NEED_BINUTILS = (
    "B=" + CUDA_BINUTILS + "; for t in cuobjdump nvdisasm; do [ -x $$B/$$t ] || { " +
    "echo \"gk contract: no $$t in $$B: the contract tests read the SASS with cuobjdump and nvdisasm," +
    " which this CUDA toolkit lacks. Run 'bash tools/setup.sh' (it installs both from NVIDIA's PyPI" +
    " wheels into " + CUDA_BINUTILS + "), or point --repo_env=GK_CUDA_BINUTILS at a folder that holds" +
    " both.\" >&2; exit 1; }; done; "
)

def gk_cuda_contract(name, src, hdrs, arch, expect):
    """Contract test: compiles src (a TU that includes one header, implementation on) for one arch.

    The compile itself is the standalone-header check (warnings are errors). Four reports of it,
    in _contract/<name>/, are then checked by contract_check.sh against the rules of `expect`
    (one .expect file or a list of them): the ptxas report (-Xptxas -v: registers, stack frame,
    spills), the PTX (--keep), and of the compiled object cuobjdump -res-usage (registers, stack,
    local memory) and cuobjdump -sass (encodings dropped).
    """
    expects = [expect] if type(expect) == "string" else expect
    out = "_contract/%s/" % name
    report, ptx, sass, res = out + "ptxas.txt", out + "kernels.ptx", out + "kernels.sass", out + "res_usage.txt"
    native.genrule(
        name = name + "_compile",
        srcs = [src] + hdrs,
        outs = [report, ptx, sass, res],
        cmd = ("set -o pipefail; " + NVCC_OWN_TMPDIR + _NEED_BINUTILS + "d=$$(mktemp -d); " + NVCC + " -c " + NVCC_FLAGS +
               " -Werror all-warnings" +
               " -gencode=arch=compute_%s,code=sm_%s -Xptxas -v --keep --keep-dir $$d" % (arch, arch) +
               " $(location " + src + ") -o $$d/out.o 2> $(location " + report + ")" +
               " || { cat $(location " + report + ") >&2; exit 1; }; " +
               "cat $$d/*.ptx > $(location " + ptx + ") && " +
               "{ NVDISASM_PATH=$$B $$B/cuobjdump -sass $$d/out.o | " + _SASS_COMPACT + " > $(location " + sass + "); } && " +
               "$$B/cuobjdump -res-usage $$d/out.o > $(location " + res + ") && " +
               "rm -rf $$d"),
        message = "nvcc contract " + src + " sm_" + arch,
    )
    native.sh_test(
        name = name,
        srcs = ["//gk_tests/contract:contract_check.sh"],
        args = ["$(location %s)" % f for f in [report, ptx, sass, res]] + ["$(location %s)" % e for e in expects],
        data = [report, ptx, sass, res] + expects,
        size = "small",
    )

def gk_cuda_shared_library(name, src, hdrs = [], out = None):
    """A shared library (nvcc -shared, position-independent code, static CUDA runtime inside) from
    one .cu file, for FFI callers such as Python's ctypes."""
    native.genrule(
        name = name,
        srcs = [src] + hdrs,
        outs = [out or ("lib%s.so" % name)],
        cmd = NVCC_OWN_TMPDIR + _GENCODE + NVCC + " -shared -Xcompiler -fPIC " + NVCC_FLAGS +
              " $$G $(location " + src + ") -o $@",
        message = "nvcc -shared " + src,
    )
