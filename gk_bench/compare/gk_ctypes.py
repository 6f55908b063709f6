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


class GkLedger(ctypes.Structure):
    """gk_ledger (gk_core.cuh): a kernel's FLOPs and fewest bytes, returned by value."""
    _fields_ = [("flops", ctypes.c_double), ("bytes", ctypes.c_double)]


class GkAttentionParams(ctypes.Structure):
    """gk_attention_params (gk_attention.cuh), field by field in the C struct's order and types (int,
    int64_t strides in elements, device pointers, float, int). gk_attention_params_dense returns
    one by value; the launchers take a pointer (ctypes.byref). check_layouts(lib) checks the mirror
    against the library."""
    _fields_ = [
        ("batch", _int),
        ("heads_q", _int), ("heads_kv", _int),
        ("head_dim", _int),
        ("seqlen_q", _int), ("seqlen_k", _int),
        ("q_batch_stride", _i64), ("q_row_stride", _i64), ("q_head_stride", _i64),
        ("k_batch_stride", _i64), ("k_row_stride", _i64), ("k_head_stride", _i64),
        ("v_batch_stride", _i64), ("v_row_stride", _i64), ("v_head_stride", _i64),
        ("out_batch_stride", _i64), ("out_row_stride", _i64), ("out_head_stride", _i64),
        ("cu_seqlens_q", _ptr), ("cu_seqlens_k", _ptr),
        ("scale", _f32),
        ("softcap", _f32),
        ("causal", _int),
        ("window_left", _int), ("window_right", _int),
    ]


_params_p = ctypes.POINTER(GkAttentionParams)


class GkAttentionConfig(ctypes.Structure):
    """gk_attention_config (gk_attention.cuh), returned by value by gk_attention_config_info."""
    _fields_ = [("name", ctypes.c_char_p), ("head_dim", _int), ("bm", _int), ("bn", _int), ("threads", _int),
                ("smem_bytes", _int), ("wgmma", _int)]

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
    # gk_attention.cuh
    # gk_attention_params_dense(batch, heads_q, heads_kv, head_dim, seqlen_q, seqlen_k): by value
    "gk_attention_params_dense": (GkAttentionParams, [_int, _int, _int, _int, _int, _int]),
    # gk_attention_fwd_bf16(out, q, k, v, lse, params, workspace, workspace_bytes, stream)
    "gk_attention_fwd_bf16": (_err, [_ptr, _ptr, _ptr, _ptr, _ptr, _params_p, _ptr, ctypes.c_size_t, _ptr]),
    # gk_attention_workspace_bytes(params)
    "gk_attention_workspace_bytes": (ctypes.c_size_t, [_params_p]),
    # gk_attention_ledger(params, dtype): by value
    "gk_attention_ledger": (GkLedger, [_params_p, _int]),
    # gk_attention_ex(config, splits, dtype, out, q, k, v, lse, params, workspace, workspace_bytes, stream)
    "gk_attention_ex": (_err, [_int, _int, _int, _ptr, _ptr, _ptr, _ptr, _ptr, _params_p, _ptr, ctypes.c_size_t,
                               _ptr]),
    # gk_attention_config_count(), gk_attention_config_info(config): by value
    "gk_attention_config_count": (ctypes.c_uint, []),  # not _int: that restype is taken for a cudaError_t
    "gk_attention_config_info": (GkAttentionConfig, [_int]),
    # gk_core.cuh
    "gk_failure_reason": (ctypes.c_char_p, []),
}


class GkError(RuntimeError):
    """A gk launcher returned a cudaError_t other than cudaSuccess."""


def missing_symbols(path):
    """The names in SIGNATURES that the library at path does not export (loads it; no CUDA call)."""
    lib = ctypes.CDLL(path)
    return [name for name in SIGNATURES if not hasattr(lib, name)]


def check_layouts(path):
    """Problems (a list of strings, empty when none) of the struct mirrors above against the library
    at path, through host-only calls that touch no GPU: gk_attention_params_dense's fields, for a
    shape whose every stride differs, and gk_attention_ledger's result."""
    lib = ctypes.CDLL(path)
    problems = []
    dense = lib.gk_attention_params_dense
    dense.restype, dense.argtypes = SIGNATURES["gk_attention_params_dense"]
    ledger = lib.gk_attention_ledger
    ledger.restype, ledger.argtypes = SIGNATURES["gk_attention_ledger"]
    b, hq, hkv, d, sq, sk = 3, 8, 2, 72, 40, 56
    p = dense(b, hq, hkv, d, sq, sk)
    want = {"batch": b, "heads_q": hq, "heads_kv": hkv, "head_dim": d, "seqlen_q": sq, "seqlen_k": sk,
            "q_batch_stride": sq * hq * d, "q_row_stride": hq * d, "q_head_stride": d,
            "k_batch_stride": sk * hkv * d, "k_row_stride": hkv * d, "k_head_stride": d,
            "v_batch_stride": sk * hkv * d, "v_row_stride": hkv * d, "v_head_stride": d,
            "out_batch_stride": sq * hq * d, "out_row_stride": hq * d, "out_head_stride": d,
            "cu_seqlens_q": None, "cu_seqlens_k": None, "scale": 0.0, "softcap": 0.0, "causal": 0,
            "window_left": -1, "window_right": -1}
    for name, value in want.items():
        if getattr(p, name) != value:
            problems.append("gk_attention_params_dense: field %s is %r, want %r (the mirror's fields or types "
                            "differ from gk_attention_params)" % (name, getattr(p, name), value))
    p.causal = 1  # bottom-right: row i sees i + sk - sq + 1 keys
    got = ledger(ctypes.byref(p), GK_BF16)
    pairs = sum(i + sk - sq + 1 for i in range(sq))
    flops, nbytes = 4.0 * b * hq * d * pairs, 2.0 * d * b * (2 * sq * hq + 2 * sk * hkv)
    if got.flops != flops or got.bytes != nbytes:
        problems.append("gk_attention_ledger (causal): %g FLOPs and %g bytes, want %g and %g" %
                        (got.flops, got.bytes, flops, nbytes))
    return problems


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
