"""Repository rule for the local CUDA toolkit (no download).

The toolkit path is GK_CUDA_PATH from the environment (`--repo_env=GK_CUDA_PATH=/opt/cuda`),
default /usr/local/cuda. The repository exposes the runtime's C headers, the static CUDA runtime and cuBLAS for linking,
and CUDA_PATH for gk's nvcc rules (third_party/cuda/gk_cuda.bzl).
"""

def _gk_cuda_configure_impl(ctx):
    path = ctx.os.environ.get("GK_CUDA_PATH", "/usr/local/cuda")
    if not ctx.path(path + "/bin/nvcc").exists:
        fail("gk: no nvcc at %s/bin/nvcc. Install the CUDA toolkit or point " % path +
             "--repo_env=GK_CUDA_PATH=<toolkit root> at it.")
    ctx.symlink(path + "/lib64", "lib64")
    ctx.symlink(path + "/include", "include")
    ctx.file("defs.bzl", 'CUDA_PATH = "%s"\n' % path)
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
    environ = ["GK_CUDA_PATH"],
    local = True,
)
