"""Repository rule for the local CUDA toolkit (no download).

The toolkit path is GK_CUDA_PATH from the environment (`--repo_env=GK_CUDA_PATH=/opt/cuda`),
default /usr/local/cuda. The repository exposes the runtime's C headers, the static CUDA runtime
and cuBLAS for linking, and, for gk's nvcc rules (third_party/cuda/gk_cuda.bzl), CUDA_PATH and
CUDA_BINUTILS.

CUDA_BINUTILS is the folder holding cuobjdump and nvdisasm, which the contract tests use to read
the SASS of what nvcc compiled. The build machines' toolkit lacks them; tools/setup.sh installs
them from NVIDIA's PyPI wheels into GK_CUDA_BINUTILS_DEFAULT. Chosen, in this order:
  1. GK_CUDA_BINUTILS from the environment (`--repo_env=GK_CUDA_BINUTILS=/some/bin`);
  2. the toolkit's own bin/, where it holds both (a full CUDA install, e.g. on the GPU host);
  3. GK_CUDA_BINUTILS_DEFAULT, where tools/setup.sh puts them.
Nothing checks here that the folder holds them: the contract compile does, each time it runs,
and fails saying what to do. So tools installed after this rule ran are found without a refetch.
"""

# Keep in step with tools/setup.sh (CUDA_BINUTILS_VERSION, CUDA_BINUTILS_DIR).
GK_CUDA_BINUTILS_DEFAULT = "/opt/gk/cuda-binutils-13.2.51/bin"

def _has_binutils(ctx, folder):
    return ctx.path(folder + "/cuobjdump").exists and ctx.path(folder + "/nvdisasm").exists

def _gk_cuda_configure_impl(ctx):
    path = ctx.os.environ.get("GK_CUDA_PATH", "/usr/local/cuda")
    if not ctx.path(path + "/bin/nvcc").exists:
        fail("gk: no nvcc at %s/bin/nvcc. Install the CUDA toolkit or point " % path +
             "--repo_env=GK_CUDA_PATH=<toolkit root> at it.")
    binutils = ctx.os.environ.get("GK_CUDA_BINUTILS", "")
    if not binutils:
        binutils = path + "/bin" if _has_binutils(ctx, path + "/bin") else GK_CUDA_BINUTILS_DEFAULT
    ctx.symlink(path + "/lib64", "lib64")
    ctx.symlink(path + "/include", "include")
    ctx.file("defs.bzl", 'CUDA_PATH = "%s"\nCUDA_BINUTILS = "%s"\n' % (path, binutils))
    ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

exports_files(["defs.bzl"])

# The runtime API's C headers, for sources a host compiler builds (the C API test).
cc_library(
    name = "headers",
    hdrs = glob(["include/*.h", "include/crt/*.h", "include/crt/*.hpp"]),
    includes = ["include"],
)

# Static CUDA runtime: nvcc's default, and what lets a binary built here run on a GPU host.
cc_library(
    name = "cudart_static",
    srcs = ["lib64/libcudart_static.a"],
    linkopts = ["-ldl", "-lrt", "-lpthread"],
    linkstatic = 1,
)

# cuBLAS ships as a shared library only; binaries find libcublas.so.13 on the GPU host.
cc_library(
    name = "cublas",
    srcs = ["lib64/libcublas.so", "lib64/libcublasLt.so"],
)
""")

gk_cuda_configure = repository_rule(
    implementation = _gk_cuda_configure_impl,
    environ = ["GK_CUDA_PATH", "GK_CUDA_BINUTILS"],
    local = True,
)
