"""gk's C API through ctypes: the declarations of every function the comparison scripts call.

libgk.so is a shared build of every gk header's implementation with C linkage (built by
tools/bundle.sh; in a bundle it is lib/libgk.so). Every pointer is a device pointer, passed as
an int or a ctypes.c_void_p (torch: tensor.data_ptr()); the stream is a cudaStream_t
(torch.cuda.current_stream().cuda_stream). Launchers return a cudaError_t (0 = success); this
module turns any other value into a GkError carrying gk_failure_reason().

Nothing here imports torch or calls CUDA: `missing_symbols` checks a library on a machine with
no GPU.
"""

import ctypes

# gk_dtype (gk_core.cuh) and gk_act (gk_gemm.cuh)
GK_F32, GK_BF16, GK_F16 = 0, 1, 2
GK_ACT_NONE = 0

_ptr = ctypes.c_void_p
_i64 = ctypes.c_int64
_int = ctypes.c_int
_f32 = ctypes.c_float
_err = ctypes.c_int  # cudaError_t

# name: (return type, argument types), in the order of the C declarations.
SIGNATURES = {
    # gk_reduce.cuh
    # gk_rmsnorm_bf16(out, ldo, x, ldx, weight, rows, cols, eps, stream)
    "gk_rmsnorm_bf16": (_err, [_ptr, _i64, _ptr, _i64, _ptr, _i64, _i64, _f32, _ptr]),
    # gk_layernorm_bf16(out, ldo, x, ldx, weight, bias, rows, cols, eps, stream)
    "gk_layernorm_bf16": (_err, [_ptr, _i64, _ptr, _i64, _ptr, _ptr, _i64, _i64, _f32, _ptr]),
    # gk_softmax_bf16(out, ldo, x, ldx, rows, cols, scale, stream)
    "gk_softmax_bf16": (_err, [_ptr, _i64, _ptr, _i64, _i64, _i64, _f32, _ptr]),
    # gk_residual_rmsnorm_bf16(out, ldo, residual_out, residual, ldr, x, ldx, weight, rows, cols, eps, stream)
    "gk_residual_rmsnorm_bf16": (_err, [_ptr, _i64, _ptr, _ptr, _i64, _ptr, _i64, _ptr, _i64, _i64, _f32, _ptr]),
    # gk_elementwise.cuh
    # gk_swiglu_bf16(out, gate, up, n, stream)
    "gk_swiglu_bf16": (_err, [_ptr, _ptr, _ptr, _i64, _ptr]),
    # gk_swiglu_packed_bf16(out, ldo, x, ldx, rows, d, stream): out[r][c] = silu(x[r][c]) * x[r][d + c]
    "gk_swiglu_packed_bf16": (_err, [_ptr, _i64, _ptr, _i64, _i64, _i64, _ptr]),
    # gk_gemm.cuh
    # gk_gemm_bf16(d, d_dtype, ldd, a, lda, trans_a, b, ldb, trans_b, c, ldc, bias,
    #              m, n, k, alpha, beta, act, workspace, workspace_bytes, stream)
    "gk_gemm_bf16": (_err, [_ptr, _int, _i64, _ptr, _i64, _int, _ptr, _i64, _int, _ptr, _i64, _ptr,
                            _i64, _i64, _i64, _f32, _f32, _int, _ptr, ctypes.c_size_t, _ptr]),
    # gk_gemm_workspace_bytes(m, n, k, trans_a, lda, trans_b, ldb)
    "gk_gemm_workspace_bytes": (ctypes.c_size_t, [_i64, _i64, _i64, _int, _i64, _int, _i64]),
    # gk_core.cuh
    "gk_failure_reason": (ctypes.c_char_p, []),
}


class GkError(RuntimeError):
    """A gk launcher returned a cudaError_t other than cudaSuccess."""


def missing_symbols(path):
    """The names in SIGNATURES that the library at path does not export (loads it; no CUDA call)."""
    lib = ctypes.CDLL(path)
    return [name for name in SIGNATURES if not hasattr(lib, name)]


class Gk:
    """libgk.so with its functions declared. gk.rmsnorm_bf16(...) calls gk_rmsnorm_bf16 and raises
    GkError, with gk_failure_reason(), when it does not return cudaSuccess."""

    def __init__(self, path):
        self.path = path
        self.lib = ctypes.CDLL(path)
        for name, (restype, argtypes) in SIGNATURES.items():
            fn = getattr(self.lib, name)  # AttributeError names a missing symbol
            fn.restype = restype
            fn.argtypes = argtypes
            if restype is _err:
                fn.errcheck = self._check
            setattr(self, name[len("gk_"):], fn)

    def _check(self, result, fn, args):
        if result != 0:
            reason = self.lib.gk_failure_reason()
            raise GkError("%s returned cudaError_t %d: %s" % (fn.__name__, result,
                                                             reason.decode(errors="replace") if reason else ""))
        return result
