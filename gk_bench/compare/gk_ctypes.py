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

# gk_dtype (gk_core.cuh), gk_act (gk_gemm.cuh), gk_rope_style (gk_paged.cuh) and gk_w4_zeros (gk_quant.cuh)
GK_F32, GK_BF16, GK_F16, GK_E4M3 = 0, 1, 2, 3
GK_ACT_NONE = 0
GK_FP8_TENSOR, GK_FP8_ROW, GK_FP8_BLOCK = 0, 1, 2  # gk_fp8_scale (gk_fp8.cuh)
GK_ROPE_NEOX, GK_ROPE_GPTJ = 0, 1
GK_W4_SYMMETRIC, GK_W4_ZEROS_INT4, GK_W4_ZEROS_FLOAT = 0, 1, 2

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


class GkPagedKv(ctypes.Structure):
    """gk_paged_kv (gk_paged.cuh): a paged K / V cache, [num_blocks][block_size][heads_kv][head_dim]
    with strides in elements, field by field in the C struct's order and types. gk_paged_kv_dense
    returns one by value; the launchers take a pointer (ctypes.byref)."""
    _fields_ = [
        ("k_cache", _ptr), ("v_cache", _ptr),
        ("dtype", _int),
        ("num_blocks", _int), ("block_size", _int),
        ("heads_kv", _int), ("head_dim", _int),
        ("k_block_stride", _i64), ("k_slot_stride", _i64), ("k_head_stride", _i64),
        ("v_block_stride", _i64), ("v_slot_stride", _i64), ("v_head_stride", _i64),
        ("k_scale", _f32), ("v_scale", _f32),
    ]


class GkRope(ctypes.Structure):
    """gk_rope (gk_paged.cuh): how to rotate. gk_rope_default returns one by value (NeoX, computed
    cos and sin, no scaling); cos_sin is an optional device fp32 [max_position][rotary_dim] table."""
    _fields_ = [
        ("style", _int),
        ("rotary_dim", _int),
        ("theta", _f32),
        ("cos_sin", _ptr),
        ("max_position", _i64),
        ("factor", _f32),
        ("low_freq_factor", _f32), ("high_freq_factor", _f32),
        ("original_max_position", _int),
    ]


class GkRopeAppendParams(ctypes.Structure):
    """gk_rope_append_params (gk_paged.cuh): the tokens of one step; strides in elements, device
    pointers for positions (int32, or int64 with positions_int64 = 1), slot_mapping (int64, -1 =
    no cache write) and the optional error_flag (int)."""
    _fields_ = [
        ("tokens", _int), ("heads_q", _int), ("heads_kv", _int), ("head_dim", _int),
        ("q_token_stride", _i64), ("q_head_stride", _i64),
        ("k_token_stride", _i64), ("k_head_stride", _i64),
        ("v_token_stride", _i64), ("v_head_stride", _i64),
        ("q_out_token_stride", _i64), ("q_out_head_stride", _i64),
        ("positions", _ptr),
        ("positions_int64", _int),
        ("slot_mapping", _ptr),
        ("error_flag", _ptr),
    ]


class GkPagedDecodeParams(ctypes.Structure):
    """gk_paged_decode_params (gk_paged.cuh): one decode step over a paged cache; q and out
    [B][nq][Hq][D] with strides in elements; device pointers for block_table (int32 [B][stride]),
    seq_lens (int32 [B]) and the optional alibi_slopes (fp32 [Hq]) and error_flag (int);
    host_seq_lens an optional HOST int32 [B] (the key splits then follow the real lengths: pass a
    ctypes array's address, kept alive). gk_paged_decode_params_dense returns one by value."""
    _fields_ = [
        ("batch", _int),
        ("heads_q", _int), ("heads_kv", _int), ("head_dim", _int),
        ("queries", _int),
        ("q_batch_stride", _i64), ("q_row_stride", _i64), ("q_head_stride", _i64),
        ("out_batch_stride", _i64), ("out_row_stride", _i64), ("out_head_stride", _i64),
        ("block_table", _ptr),
        ("block_table_stride", _i64),
        ("seq_lens", _ptr),
        ("max_seq_len", _int),
        ("scale", _f32),
        ("softcap", _f32),
        ("window_left", _int),
        ("alibi_slopes", _ptr),
        ("error_flag", _ptr),
        ("host_seq_lens", _ptr),
    ]


class GkPagedDecodeConfig(ctypes.Structure):
    """gk_paged_decode_config (gk_paged.cuh), returned by value by gk_paged_decode_config_info."""
    _fields_ = [("name", ctypes.c_char_p), ("head_dim", _int), ("fp8", _int), ("keys", _int), ("stages", _int),
                ("threads", _int), ("smem_bytes", _int)]


class GkPagedDecodePlan(ctypes.Structure):
    """gk_paged_decode_plan (gk_paged.cuh), returned by value by gk_paged_decode_plan_for: the
    configuration (-1: refused), key splits, keys a split and workspace bytes the dispatcher uses."""
    _fields_ = [("config", _int), ("splits", _int), ("split_keys", _int), ("workspace_bytes", ctypes.c_size_t)]


# The x86-64 (LP64) layouts of gk_paged.cuh's decode structs, which c_api_test.c asserts with
# sizeof and offsetof on the C side: (size, {field: offset}) for fields after padding or pointers.
DECODE_LAYOUTS = {
    "GkPagedDecodeParams": (136, {"queries": 16, "q_batch_stride": 24, "out_head_stride": 64, "block_table": 72,
                                  "block_table_stride": 80, "seq_lens": 88, "max_seq_len": 96, "window_left": 108,
                                  "alibi_slopes": 112, "error_flag": 120, "host_seq_lens": 128}),
    "GkPagedDecodeConfig": (32, {"head_dim": 8, "smem_bytes": 28}),
    "GkPagedDecodePlan": (24, {"split_keys": 8, "workspace_bytes": 16}),
}

class GkW4Weight(ctypes.Structure):
    """gk_w4_weight (gk_quant.cuh): a prepacked int4 weight, the arguments gk_w4_prepack was called
    with: the packed buffer (a device pointer, 256-byte aligned), n, k (int64), group, zero_mode (a
    gk_w4_zeros) and dtype (GK_BF16 or GK_F16: the activations' dtype). The launchers take a pointer
    (ctypes.byref)."""
    _fields_ = [
        ("packed", _ptr),
        ("n", _i64), ("k", _i64),
        ("group", _int),
        ("zero_mode", _int),
        ("dtype", _int),
    ]


class GkW4Plan(ctypes.Structure):
    """gk_w4_plan (gk_quant.cuh), returned by value by gk_w4_plan_for: the fused configuration (-1:
    refused; gk_w4_config_count() with dequant 1: the dequantize + gk_gemm path), its working warps,
    the partials a (row group, token tile) pair may have (1: warps store whole pairs), dequant, and
    the workspace bytes it uses."""
    _fields_ = [("config", _int), ("warps", _int), ("slots", _int), ("dequant", _int),
                ("workspace_bytes", ctypes.c_size_t)]


class GkW4Config(ctypes.Structure):
    """gk_w4_config (gk_quant.cuh), returned by value by gk_w4_config_info (name None for an unknown
    index): a fused kernel's 16-row weight tiles and 8-token tiles a position, independent warps a
    block, ring slots a warp (prefetch; the lean decode kernel: units in flight in registers), the
    blocks an SM its registers are budgeted for, threads, shared bytes, whether it is the lean
    decode kernel and whether it is the wgmma kernel (prefetch: its stages; a block one worker)."""
    _fields_ = [("name", ctypes.c_char_p), ("row_tiles", _int), ("token_tiles", _int), ("warps", _int),
                ("prefetch", _int), ("min_blocks", _int), ("threads", _int), ("smem_bytes", _int), ("lean", _int),
                ("wgmma", _int)]


# The x86-64 (LP64) layouts of gk_quant.cuh's structs, as gcc -std=c11 lays them out (sizeof and
# offsetof of the C structs): (size, {field: offset}).
W4_LAYOUTS = {
    "GkW4Weight": (40, {"packed": 0, "n": 8, "k": 16, "group": 24, "zero_mode": 28, "dtype": 32}),
    "GkW4Plan": (24, {"config": 0, "warps": 4, "slots": 8, "dequant": 12, "workspace_bytes": 16}),
    "GkW4Config": (48, {"name": 0, "row_tiles": 8, "token_tiles": 12, "warps": 16, "prefetch": 20, "min_blocks": 24,
                        "threads": 28, "smem_bytes": 32, "lean": 36, "wgmma": 40}),
}

_kv_p = ctypes.POINTER(GkPagedKv)
_rope_p = ctypes.POINTER(GkRope)
_rope_params_p = ctypes.POINTER(GkRopeAppendParams)
_decode_params_p = ctypes.POINTER(GkPagedDecodeParams)
_w4_p = ctypes.POINTER(GkW4Weight)

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
    # gk_paged.cuh
    # gk_paged_kv_dense(k_cache, v_cache, dtype, num_blocks, block_size, heads_kv, head_dim): by value
    "gk_paged_kv_dense": (GkPagedKv, [_ptr, _ptr, _int, _int, _int, _int, _int]),
    # gk_rope_default(rotary_dim, theta): by value
    "gk_rope_default": (GkRope, [_int, _f32]),
    # gk_rope_append_bf16(q_out, q, k, v, params, rope, cache, stream)
    "gk_rope_append_bf16": (_err, [_ptr, _ptr, _ptr, _ptr, _rope_params_p, _rope_p, _kv_p, _ptr]),
    "gk_rope_append_f16": (_err, [_ptr, _ptr, _ptr, _ptr, _rope_params_p, _rope_p, _kv_p, _ptr]),
    # gk_rope_append_ledger(params, dtype, cache_dtype): by value
    "gk_rope_append_ledger": (GkLedger, [_rope_params_p, _int, _int]),
    # gk_paged_decode_params_dense(batch, heads_q, heads_kv, head_dim, queries, block_table,
    #                              max_blocks_per_seq, seq_lens, max_seq_len): by value
    "gk_paged_decode_params_dense": (GkPagedDecodeParams, [_int, _int, _int, _int, _int, _ptr, _int, _ptr, _int]),
    # gk_paged_decode_bf16(out, lse, q, cache, params, workspace, workspace_bytes, stream); lse may be NULL
    "gk_paged_decode_bf16": (_err, [_ptr, _ptr, _ptr, _kv_p, _decode_params_p, _ptr, ctypes.c_size_t, _ptr]),
    "gk_paged_decode_f16": (_err, [_ptr, _ptr, _ptr, _kv_p, _decode_params_p, _ptr, ctypes.c_size_t, _ptr]),
    # gk_paged_decode_ex(config, splits, dtype, out, lse, q, cache, params, workspace, workspace_bytes, stream)
    "gk_paged_decode_ex": (_err, [_int, _int, _int, _ptr, _ptr, _ptr, _kv_p, _decode_params_p, _ptr, ctypes.c_size_t,
                                  _ptr]),
    # gk_paged_decode_plan_for(params, cache): by value
    "gk_paged_decode_plan_for": (GkPagedDecodePlan, [_decode_params_p, _kv_p]),
    # gk_paged_decode_config_count(), gk_paged_decode_config_info(config): by value
    "gk_paged_decode_config_count": (ctypes.c_uint, []),  # not _int: that restype is taken for a cudaError_t
    "gk_paged_decode_config_info": (GkPagedDecodeConfig, [_int]),
    # gk_paged_decode_ledger(params, dtype, cache_dtype, host_seq_lens): by value; host_seq_lens a
    # host int32 array of B lengths or None (max_seq_len for every sequence)
    "gk_paged_decode_ledger": (GkLedger, [_decode_params_p, _int, _int, ctypes.POINTER(ctypes.c_int)]),
    # gk_quant.cuh
    # gk_w4_packed_bytes(n, k, group, zero_mode): 0 for a refused shape
    "gk_w4_packed_bytes": (ctypes.c_size_t, [_i64, _i64, _int, _int]),
    # gk_w4_prepack(packed, dtype, q, scales, scale_dtype, zeros, n, k, group, zero_mode, stream)
    "gk_w4_prepack": (_err, [_ptr, _int, _ptr, _ptr, _int, _ptr, _i64, _i64, _int, _int, _ptr]),
    # gk_w4_from_gptq(q, zeros, qweight, qzeros, host_g_idx, n, k, group, zero_offset, stream); host_g_idx
    # a HOST int32 array of k entries or None
    "gk_w4_from_gptq": (_err, [_ptr, _ptr, _ptr, _ptr, ctypes.POINTER(ctypes.c_int32), _i64, _i64, _int, _int, _ptr]),
    # gk_w4_from_awq(q, zeros, qweight, qzeros, n, k, group, stream)
    "gk_w4_from_awq": (_err, [_ptr, _ptr, _ptr, _ptr, _i64, _i64, _int, _ptr]),
    # gk_w4_dequant(dst, lddst, w, stream)
    "gk_w4_dequant": (_err, [_ptr, _i64, _w4_p, _ptr]),
    # gk_w4_gemm_bf16(d, d_dtype, ldd, x, ldx, w, c, ldc, bias, m, alpha, beta, act, workspace,
    #                 workspace_bytes, stream)
    "gk_w4_gemm_bf16": (_err, [_ptr, _int, _i64, _ptr, _i64, _w4_p, _ptr, _i64, _ptr, _i64, _f32, _f32, _int, _ptr,
                               ctypes.c_size_t, _ptr]),
    "gk_w4_gemm_f16": (_err, [_ptr, _int, _i64, _ptr, _i64, _w4_p, _ptr, _i64, _ptr, _i64, _f32, _f32, _int, _ptr,
                              ctypes.c_size_t, _ptr]),
    # gk_w4_gemm_ex(config, warps, d, d_dtype, ldd, x, ldx, w, c, ldc, bias, m, alpha, beta, act,
    #               workspace, workspace_bytes, stream): x of w->dtype; config -1 and warps 0: the
    #               dispatcher's
    "gk_w4_gemm_ex": (_err, [_int, _int, _ptr, _int, _i64, _ptr, _i64, _w4_p, _ptr, _i64, _ptr, _i64, _f32, _f32,
                             _int, _ptr, ctypes.c_size_t, _ptr]),
    # gk_w4_plan_for(m, n, k, group, zero_mode, workspace_bytes): by value
    "gk_w4_plan_for": (GkW4Plan, [_i64, _i64, _i64, _int, _int, ctypes.c_size_t]),
    # gk_w4_workspace_bytes(m, n, k): what the dispatcher uses on the current device (0 without one)
    "gk_w4_workspace_bytes": (ctypes.c_size_t, [_i64, _i64, _i64]),
    # gk_w4_config_count(), gk_w4_config_info(config): by value
    "gk_w4_config_count": (ctypes.c_uint, []),  # not _int: that restype is taken for a cudaError_t
    "gk_w4_config_info": (GkW4Config, [_int]),
    # gk_w4_ledger(m, n, k, group, zero_mode, x_dtype, d_dtype, has_bias): by value
    "gk_w4_ledger": (GkLedger, [_i64, _i64, _i64, _int, _int, _int, _int, _int]),
    # gk_fp8.cuh
    # gk_fp8_gemm(d, d_dtype, ldd, a, lda, scale_a, scale_a_mode, b, ldb, scale_b, scale_b_mode, c, ldc,
    #             bias, m, n, k, alpha, beta, act, workspace, workspace_bytes, stream)
    "gk_fp8_gemm": (_err, [_ptr, _int, _i64, _ptr, _i64, _ptr, _int, _ptr, _i64, _ptr, _int, _ptr, _i64, _ptr,
                           _i64, _i64, _i64, _f32, _f32, _int, _ptr, ctypes.c_size_t, _ptr]),
    # gk_fp8_workspace_bytes(m, n, k, block)
    "gk_fp8_workspace_bytes": (ctypes.c_size_t, [_i64, _i64, _i64, _int]),
    # gk_fp8_quantize(out, ldo, scales, scale_mode, block_rows, x, x_dtype, ldx, trans, rows, cols, stream)
    "gk_fp8_quantize": (_err, [_ptr, _i64, _ptr, _int, _int, _ptr, _int, _i64, _int, _i64, _i64, _ptr]),
    # gk_rmsnorm_quant_e4m3_bf16(out, ldo, scales, x, ldx, weight, rows, cols, eps, stream) (gk_reduce.cuh)
    "gk_rmsnorm_quant_e4m3_bf16": (_err, [_ptr, _i64, _ptr, _ptr, _i64, _ptr, _i64, _i64, _f32, _ptr]),
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
    problems += _check_paged_layouts(lib)
    problems += _check_decode_layouts(lib)
    problems += _check_w4(lib)
    return problems


def _check_paged_layouts(lib):
    """gk_paged.cuh's mirrors: gk_paged_kv_dense's fields (every stride differs), gk_rope_default's,
    gk_rope_append_ledger's bytes (reads tokens, heads, head_dim, positions_int64), and the fields no
    host function returns, through the reasons gk_rope_append_bf16 gives for refused arguments (each
    field set to a value the reason quotes); all refused before any CUDA call."""
    problems = []
    for name in ("gk_paged_kv_dense", "gk_rope_default", "gk_rope_append_ledger", "gk_rope_append_bf16",
                 "gk_failure_reason"):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = SIGNATURES[name]
    kc, vc, nb, bs, hkv, d = 0x10000000, 0x30000000, 7, 16, 3, 72
    kv = lib.gk_paged_kv_dense(kc, vc, GK_E4M3, nb, bs, hkv, d)
    want = {"k_cache": kc, "v_cache": vc, "dtype": GK_E4M3, "num_blocks": nb, "block_size": bs, "heads_kv": hkv,
            "head_dim": d, "k_block_stride": bs * hkv * d, "k_slot_stride": hkv * d, "k_head_stride": d,
            "v_block_stride": bs * hkv * d, "v_slot_stride": hkv * d, "v_head_stride": d, "k_scale": 1.0,
            "v_scale": 1.0}
    for name, value in want.items():
        if getattr(kv, name) != value:
            problems.append("gk_paged_kv_dense: field %s is %r, want %r (the mirror's fields or types differ from "
                            "gk_paged_kv)" % (name, getattr(kv, name), value))
    rope = lib.gk_rope_default(48, 12345.0)
    want = {"style": GK_ROPE_NEOX, "rotary_dim": 48, "theta": 12345.0, "cos_sin": None, "max_position": 0,
            "factor": 0.0, "low_freq_factor": 0.0, "high_freq_factor": 0.0, "original_max_position": 0}
    for name, value in want.items():
        if getattr(rope, name) != value:
            problems.append("gk_rope_default: field %s is %r, want %r (the mirror's fields or types differ from "
                            "gk_rope)" % (name, getattr(rope, name), value))
    t, hq = 5, 6
    p = GkRopeAppendParams(tokens=t, heads_q=hq, heads_kv=hkv, head_dim=d, positions_int64=1)
    got = lib.gk_rope_append_ledger(ctypes.byref(p), GK_BF16, GK_E4M3)
    nbytes = t * d * (2.0 * hq * 2 + 2.0 * hkv * 2 + 2.0 * hkv * 1) + t * 8 + t * 8
    if got.bytes != nbytes:
        problems.append("gk_rope_append_ledger: %g bytes, want %g (gk_rope_append_params' mirror?)" % (got.bytes, nbytes))

    # a valid call, in bf16, with the k and v caches on one address: refused by the last check there is
    base = 0x50000000
    kv = lib.gk_paged_kv_dense(kc, kc, GK_BF16, nb, bs, hkv, d)
    row = (hq + 2 * hkv) * d  # q, k, v of a token in one packed row
    p = GkRopeAppendParams(tokens=t, heads_q=hq, heads_kv=hkv, head_dim=d, q_token_stride=row, q_head_stride=d,
                           k_token_stride=row, k_head_stride=d, v_token_stride=row, v_head_stride=d,
                           q_out_token_stride=hq * d, q_out_head_stride=d, positions=base + (1 << 24),
                           positions_int64=0, slot_mapping=base + (2 << 24), error_flag=None)
    rope = lib.gk_rope_default(64, 10000.0)

    def reason_of(p, rope, kv):
        q = base + (4 << 24)
        e = lib.gk_rope_append_bf16(base, q, q + 2 * hq * d, q + 2 * (hq + hkv) * d, ctypes.byref(p),
                                    ctypes.byref(rope), ctypes.byref(kv), None)
        return e, (lib.gk_failure_reason() or b"").decode(errors="replace")

    def expect(what, needle, p, rope, kv):
        e, r = reason_of(p, rope, kv)
        if e != 1 or needle not in r:
            problems.append("gk_rope_append_bf16 (%s): returned %d, reason %r, want 1 and %r (a mirror's fields "
                            "differ from the C struct's?)" % (what, e, r, needle))

    last = "'k_cache' and 'v_cache' overlap"
    expect("valid arguments", last, p, rope, kv)
    for field in ("q_token_stride", "q_head_stride", "k_token_stride", "k_head_stride", "v_token_stride",
                  "v_head_stride", "q_out_token_stride", "q_out_head_stride"):
        bad = GkRopeAppendParams.from_buffer_copy(p)
        setattr(bad, field, getattr(p, field) + 4)
        expect(field, "'%s' is %d," % (field, getattr(bad, field)), bad, rope, kv)
    for field in ("k_block_stride", "k_slot_stride", "k_head_stride", "v_block_stride", "v_slot_stride",
                  "v_head_stride"):
        bad = GkPagedKv.from_buffer_copy(kv)
        setattr(bad, field, getattr(kv, field) + 4)
        quoted = field + (" (cache)" if field.endswith("head_stride") else "")
        expect("cache " + field, "'%s' is %d," % (quoted, getattr(bad, field)), p, rope, bad)
    bad = GkRopeAppendParams.from_buffer_copy(p)
    bad.positions_int64 = 1
    bad.positions = base + (1 << 24) + 4
    expect("positions_int64", "'positions'", bad, rope, kv)
    bad.error_flag = base + (3 << 24) + 2
    bad.positions = base + (1 << 24)
    expect("error_flag", "'error_flag'", bad, rope, kv)
    bad = GkRopeAppendParams.from_buffer_copy(p)
    bad.slot_mapping = base + (2 << 24) + 4
    expect("slot_mapping", "'slot_mapping'", bad, rope, kv)
    bad = GkPagedKv.from_buffer_copy(kv)
    bad.dtype, bad.k_scale, bad.v_scale = GK_E4M3, 0.5, -1.0
    expect("v_scale", "k_scale and v_scale > 0", p, rope, bad)
    bad.v_scale = 2.0
    expect("k_scale, v_scale", last, p, rope, bad)
    r2 = GkRope.from_buffer_copy(rope)
    r2.style = GK_ROPE_GPTJ
    r2.rotary_dim = 40
    expect("GPT-J, rotary_dim 40", last, p, r2, kv)
    r2.style = 7
    expect("style", "rope style 7", p, r2, kv)
    r2 = GkRope.from_buffer_copy(rope)
    r2.rotary_dim = 40
    expect("rotary_dim", "rotary_dim 40:", p, r2, kv)
    r2 = GkRope.from_buffer_copy(rope)
    r2.theta = -3.0
    expect("theta", "theta -3 must be > 0", p, r2, kv)
    r2.cos_sin = base + (5 << 24)
    r2.max_position = -9
    expect("cos_sin, max_position", "max_position -9 must be > 0", p, r2, kv)
    r2.max_position = 4096
    expect("cos_sin, theta -3", last, p, r2, kv)
    r2 = GkRope.from_buffer_copy(rope)
    r2.factor, r2.low_freq_factor, r2.high_freq_factor, r2.original_max_position = 8.0, 1.0, 4.0, 8192
    expect("Llama-3.1 scaling", last, p, r2, kv)
    for field, value in (("low_freq_factor", 0.0), ("high_freq_factor", 0.5), ("original_max_position", 0)):
        r3 = GkRope.from_buffer_copy(r2)
        setattr(r3, field, value)
        expect("Llama-3.1 scaling, %s %r" % (field, value), "Llama-3.1 scaling needs", p, r3, kv)
    r3 = GkRope.from_buffer_copy(r2)
    r3.factor, r3.high_freq_factor = 0.0, 0.5
    expect("factor 0", last, p, r3, kv)
    return problems


def _decode_pairs(lens, queries, window_left):
    """The (query, key) pairs a decode step computes: query i of a sequence of length L sits at
    L - queries + i and sees keys max(0, pos - window_left) .. pos (from 0 when window_left < 0)."""
    pairs = 0
    for length in lens:
        for i in range(queries):
            pos = length - queries + i
            if pos >= 0:
                pairs += pos - (max(0, pos - window_left) if window_left >= 0 else 0) + 1
    return pairs


def _check_decode_layouts(lib):
    """gk_paged.cuh's decode mirrors: their sizes and offsets (DECODE_LAYOUTS), gk_paged_decode_params_dense's
    fields (every stride differs), gk_paged_decode_ledger (reads batch, heads, head_dim, queries,
    max_seq_len, window_left and the host lengths), the configurations, a refused plan, and the fields
    no host function returns through the reasons gk_paged_decode_bf16 gives for refused arguments (each
    field set to a value the reason quotes); all refused before any CUDA call."""
    problems = []
    for cls in (GkPagedDecodeParams, GkPagedDecodeConfig, GkPagedDecodePlan):
        size, offsets = DECODE_LAYOUTS[cls.__name__]
        if ctypes.sizeof(cls) != size:
            problems.append("%s: %d bytes, want %d (c_api_test.c's sizeof)" % (cls.__name__, ctypes.sizeof(cls), size))
        for name, offset in offsets.items():
            if getattr(cls, name).offset != offset:
                problems.append("%s.%s at offset %d, want %d (c_api_test.c's offsetof)" %
                                (cls.__name__, name, getattr(cls, name).offset, offset))
    for name in ("gk_paged_decode_params_dense", "gk_paged_decode_ledger", "gk_paged_decode_plan_for",
                 "gk_paged_decode_config_count", "gk_paged_decode_config_info", "gk_paged_decode_bf16",
                 "gk_paged_kv_dense", "gk_failure_reason"):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = SIGNATURES[name]
    b, hq, hkv, d, nq, table, max_blocks, lens_ptr, max_len = 3, 12, 4, 80, 5, 0x20000000, 3, 0x21000000, 40
    p = lib.gk_paged_decode_params_dense(b, hq, hkv, d, nq, table, max_blocks, lens_ptr, max_len)
    want = {"batch": b, "heads_q": hq, "heads_kv": hkv, "head_dim": d, "queries": nq,
            "q_batch_stride": nq * hq * d, "q_row_stride": hq * d, "q_head_stride": d,
            "out_batch_stride": nq * hq * d, "out_row_stride": hq * d, "out_head_stride": d,
            "block_table": table, "block_table_stride": max_blocks, "seq_lens": lens_ptr, "max_seq_len": max_len,
            "scale": 0.0, "softcap": 0.0, "window_left": -1, "alibi_slopes": None, "error_flag": None,
            "host_seq_lens": None}
    for name, value in want.items():
        if getattr(p, name) != value:
            problems.append("gk_paged_decode_params_dense: field %s is %r, want %r (the mirror's fields or types differ "
                            "from gk_paged_decode_params)" % (name, getattr(p, name), value))

    # the ledger: k and v rows of each key in the cache's dtype, q and out, the lengths; 4 Hq D a pair
    lens = [7, 2, 40]
    host = (ctypes.c_int * b)(*lens)
    for window, lens_arg, used in ((-1, host, lens), (3, host, lens), (-1, None, [max_len] * b)):
        q = GkPagedDecodeParams.from_buffer_copy(p)
        q.window_left = window
        got = lib.gk_paged_decode_ledger(ctypes.byref(q), GK_BF16, GK_E4M3, lens_arg)
        flops = 4.0 * _decode_pairs(used, nq, window) * hq * d
        nbytes = sum(used) * hkv * d * 1 * 2.0 + 2.0 * b * nq * hq * d * 2 + b * 4.0
        if got.flops != flops or got.bytes != nbytes:
            problems.append("gk_paged_decode_ledger (window_left %d, host lengths %s): %g FLOPs and %g bytes, want %g and "
                            "%g (gk_paged_decode_params' mirror?)" % (window, used, got.flops, got.bytes, flops, nbytes))

    n = lib.gk_paged_decode_config_count()
    if n < 1 or lib.gk_paged_decode_config_info(n).name is not None or lib.gk_paged_decode_config_info(-1).name is not None:
        problems.append("gk_paged_decode_config_count() is %d, or gk_paged_decode_config_info names an unknown index" % n)
    for i in range(n):
        c = lib.gk_paged_decode_config_info(i)
        if not (c.name and c.head_dim in (64, 128, 256) and c.fp8 in (0, 1) and c.keys > 0 and c.keys % 16 == 0 and
                1 <= c.stages <= 8 and c.threads > 0 and c.threads % 32 == 0 and c.smem_bytes > 0):
            problems.append("gk_paged_decode_config_info(%d): %r, D %d, fp8 %d, %d keys, %d stages, %d threads, %d bytes "
                            "(gk_paged_decode_config's mirror?)" % (i, c.name, c.head_dim, c.fp8, c.keys, c.stages,
                                                                    c.threads, c.smem_bytes))

    kc, vc, nb = 0x30000000, 0x38000000, 9
    kv = lib.gk_paged_kv_dense(kc, vc, GK_BF16, nb, 16, hkv, d)
    bad = GkPagedDecodeParams.from_buffer_copy(p)
    bad.heads_q = 10
    plan = lib.gk_paged_decode_plan_for(ctypes.byref(bad), ctypes.byref(kv))
    reason = (lib.gk_failure_reason() or b"").decode(errors="replace")
    if plan.config != -1 or plan.workspace_bytes != 0 or "heads_q (10) is not a multiple of heads_kv (4)" not in reason:
        problems.append("gk_paged_decode_plan_for (heads_q 10 on 4 kv heads): config %d, %d workspace bytes, reason %r; "
                        "want -1, 0 and the heads named" % (plan.config, plan.workspace_bytes, reason))

    # a valid call, but for the workspace's alignment: refused by the last check before the launch
    base = 0x50000000
    out, q_ptr, lse = base, base + (1 << 24), base + (2 << 24)
    ws, alibi, flag = base + (3 << 24) + 16, base + (4 << 24), base + (5 << 24)

    def reason_of(p, kv, lse=lse):
        e = lib.gk_paged_decode_bf16(out, lse, q_ptr, ctypes.byref(kv), ctypes.byref(p), ws, 1 << 20, None)
        return e, (lib.gk_failure_reason() or b"").decode(errors="replace")

    def expect(what, needle, p, kv=kv, lse=lse):
        e, r = reason_of(p, kv, lse)
        if e != 1 or needle not in r:
            problems.append("gk_paged_decode_bf16 (%s): returned %d, reason %r, want 1 and %r (a mirror's fields "
                            "differ from the C struct's?)" % (what, e, r, needle))

    p.alibi_slopes, p.error_flag, p.window_left, p.scale, p.softcap = alibi, flag, 7, 0.125, 30.0
    p.host_seq_lens = ctypes.cast(host, ctypes.c_void_p).value
    last = "is not 256-byte aligned"
    expect("valid arguments", last, p)
    for field in ("q_batch_stride", "q_row_stride", "q_head_stride", "out_batch_stride", "out_row_stride",
                  "out_head_stride"):
        bad = GkPagedDecodeParams.from_buffer_copy(p)
        setattr(bad, field, getattr(p, field) + 4)
        expect(field, "'%s' is %d," % (field, getattr(bad, field)), bad)
    for field, needle in (("block_table", "'block_table'"), ("seq_lens", "'seq_lens'"),
                          ("alibi_slopes", "'alibi_slopes'"), ("error_flag", "'error_flag'")):
        bad = GkPagedDecodeParams.from_buffer_copy(p)
        setattr(bad, field, getattr(p, field) + 2)
        expect(field, needle, bad)
    expect("lse", "'lse'", p, lse=lse + 2)
    for field, value, needle in (("batch", 70000, "batch 70000 is past 65535"),
                                 ("heads_q", 10, "heads_q (10) is not a multiple of heads_kv (4)"),
                                 ("heads_kv", 6, "the cache holds 4 heads of 80, the problem 6 heads of 80"),
                                 ("head_dim", 84, "head_dim 84 is not supported"),
                                 ("queries", 17, "queries 17: 1 to 16"),
                                 ("block_table_stride", 2, "block_table_stride 2 is under"),
                                 ("max_seq_len", 49, "block_table_stride 3 is under ceil(max_seq_len / block_size) = 4"),
                                 ("softcap", -1.0, "softcap -1 must be >= 0"),
                                 ("scale", float("nan"), "scale nan is not finite")):
        bad = GkPagedDecodeParams.from_buffer_copy(p)
        setattr(bad, field, value)
        expect("%s %r" % (field, value), needle, bad)
    bad = GkPagedDecodeParams.from_buffer_copy(p)
    bad.batch = 0  # nothing to compute: succeeds before the pointers are looked at
    e, r = reason_of(bad, kv)
    if e != 0:
        problems.append("gk_paged_decode_bf16 with batch 0: returned %d (%s), want 0" % (e, r))
    return problems


def w4_packed_bytes_expected(n, k, group, zero_mode):
    """gk_w4_packed_bytes as the manual lays the prepacked form out: the codes in 16-row tiles (n / 2
    bytes... k / 2 bytes a row, rows past n padded to the tile), then the scale records (2 bytes a
    group and row of the padded tiles, rounded up to 256 bytes), and as many zero records again for
    the zero-point modes."""
    tiles = -(-n // 16)
    codes = tiles * 16 * (k // 2)
    records = -(-(tiles * (k // group) * 16 * 2) // 256) * 256
    return codes + records * (1 if zero_mode == GK_W4_SYMMETRIC else 2)


def _check_w4(lib):
    """gk_quant.cuh's mirrors and argument orders: the structs' sizes and offsets (W4_LAYOUTS), the
    configurations (gk_w4_config_info), gk_w4_ledger, gk_w4_packed_bytes and gk_w4_workspace_bytes
    against the manual's formulas, a refused plan, and the refusals each launcher gives when one
    argument (or one field of gk_w4_weight) is made bad, the rest valid: all before any CUDA call."""
    problems = []
    for cls in (GkW4Weight, GkW4Plan, GkW4Config):
        size, offsets = W4_LAYOUTS[cls.__name__]
        if ctypes.sizeof(cls) != size:
            problems.append("%s: %d bytes, want %d (gcc's sizeof)" % (cls.__name__, ctypes.sizeof(cls), size))
        for name, offset in offsets.items():
            if getattr(cls, name).offset != offset:
                problems.append("%s.%s at offset %d, want %d (gcc's offsetof)" %
                                (cls.__name__, name, getattr(cls, name).offset, offset))
    names = [n for n in SIGNATURES if n.startswith("gk_w4_")] + ["gk_failure_reason"]
    fns = {}
    for name in names:
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = SIGNATURES[name]
        fns[name] = fn

    def reason():
        return (fns["gk_failure_reason"]() or b"").decode(errors="replace")

    # the configurations: the generator's derived fields
    count = fns["gk_w4_config_count"]()
    if count < 1 or fns["gk_w4_config_info"](count).name is not None or fns["gk_w4_config_info"](-1).name is not None:
        problems.append("gk_w4_config_count() is %d, or gk_w4_config_info names an unknown index" % count)
    kinds = [(fns["gk_w4_config_info"](i).lean, fns["gk_w4_config_info"](i).wgmma) for i in range(count)]
    for i in range(count):
        c = fns["gk_w4_config_info"](i)
        if c.wgmma: # a block of RW / 4 consumer warpgroups and a producer warp; PF stages of X's unit and the codes
            rings = c.prefetch * (c.token_tiles * 8 * 128 + c.row_tiles * 512)
            shape_ok = (c.row_tiles in (4, 8, 12) and c.warps == 1 and c.threads == 32 * c.row_tiles + 32 and
                        c.lean == 0 and all(w for _, w in kinds[i:]))
        else: # the warps' rings: PF slots of RW 1 KB each (the lean decode kernel has none)
            rings = 0 if c.lean else c.warps * c.prefetch * c.row_tiles * 1024
            shape_ok = (1 <= c.row_tiles <= 4 and 1 <= c.warps <= 32 and 2 <= c.prefetch <= 8 and
                        c.threads == 32 * c.warps and c.lean in (0, 1) and c.wgmma == 0 and
                        (c.lean == 0 or all(l or w for l, w in kinds[i:])))
        if not (c.name and c.name.startswith(b"gk_w4_bf16_") and shape_ok and c.token_tiles >= 1 and
                c.min_blocks >= 1 and rings <= c.smem_bytes <= 232448):
            problems.append("gk_w4_config_info(%d): %r, RW %d NT %d, %d warps, PF %d, %d blocks, %d threads, %d bytes "
                            "(the rings alone take %d): gk_w4_config's mirror?" %
                            (i, c.name, c.row_tiles, c.token_tiles, c.warps, c.prefetch, c.min_blocks, c.threads,
                             c.smem_bytes, rings))

    # the ledger: FLOPs 2 M N K; codes N K / 2, 2 bytes a group and row (twice with zero points), X, D, bias
    for m, n, k, group, zm, xdt, ddt, bias in ((3, 40, 256, 64, GK_W4_SYMMETRIC, GK_BF16, GK_F32, 0),
                                               (5, 24, 128, 32, GK_W4_ZEROS_INT4, GK_F16, GK_BF16, 1)):
        got = fns["gk_w4_ledger"](m, n, k, group, zm, xdt, ddt, bias)
        size = {GK_F32: 4, GK_BF16: 2, GK_F16: 2}
        nbytes = (n * k / 2 + (k / group) * n * 2 * (1 if zm == GK_W4_SYMMETRIC else 2) + m * k * size[xdt] +
                  m * n * size[ddt] + (4.0 * n if bias else 0.0))
        if got.flops != 2.0 * m * n * k or got.bytes != nbytes:
            problems.append("gk_w4_ledger(%d, %d, %d, %d, %d, %d, %d, %d): %g FLOPs and %g bytes, want %g and %g" %
                            (m, n, k, group, zm, xdt, ddt, bias, got.flops, got.bytes, 2.0 * m * n * k, nbytes))
    for n, k, group, zm in ((200, 256, 64, GK_W4_ZEROS_INT4), (40, 128, 128, GK_W4_SYMMETRIC),
                            (8, 192, 192, GK_W4_ZEROS_FLOAT)):
        got, want = fns["gk_w4_packed_bytes"](n, k, group, zm), w4_packed_bytes_expected(n, k, group, zm)
        if got != want:
            problems.append("gk_w4_packed_bytes(%d, %d, %d, %d) = %d, want %d" % (n, k, group, zm, got, want))
    if fns["gk_w4_packed_bytes"](12, 128, 64, GK_W4_SYMMETRIC) != 0 or "n = 12 is not a multiple of 8" not in reason():
        problems.append("gk_w4_packed_bytes(n = 12): not refused, or the reason %r does not name n" % reason())
    # gk_w4_workspace_bytes asks the device (0 without one): only m = 0 has a value known here
    if fns["gk_w4_workspace_bytes"](0, 40, 128) != 0:
        problems.append("gk_w4_workspace_bytes(m = 0) is %d, want 0" % fns["gk_w4_workspace_bytes"](0, 40, 128))
    plan = fns["gk_w4_plan_for"](4, 12, 128, 64, GK_W4_SYMMETRIC, 1 << 20)
    r = reason()
    if plan.config != -1 or plan.workspace_bytes != 0 or not r.startswith("gk_w4_plan_for: ") or "n = 12" not in r:
        problems.append("gk_w4_plan_for (n = 12): config %d, %d workspace bytes, reason %r; want -1, 0 and n named" %
                        (plan.config, plan.workspace_bytes, r))

    # the launchers: a valid call but for one argument, refused before any CUDA call
    base = 0x50000000
    n, k, group, m = 64, 256, 64, 4
    packed = base  # 256-byte aligned, gk_w4_packed_bytes(64, 256, 64, int4 zeros) < 1 << 20
    d, x, c_ptr, bias = base + (1 << 20), base + (2 << 20), base + (3 << 20), base + (4 << 20)
    ws_bad = base + (5 << 20) + 16  # not 256-byte aligned: the last check before the launch
    w = GkW4Weight(packed=packed, n=n, k=k, group=group, zero_mode=GK_W4_ZEROS_INT4, dtype=GK_BF16)

    def expect(what, needle, call, fn_name):
        e = call()
        r = reason()
        if e != 1 or not r.startswith(fn_name + ": ") or needle not in r:
            problems.append("%s (%s): returned %d, reason %r, want 1 and %r (the argument order or gk_w4_weight's "
                            "mirror differs from the C declaration?)" % (fn_name, what, e, r, needle))

    def gemm(wt, fn_name="gk_w4_gemm_bf16", **over):
        a = dict(d=d, d_dtype=GK_BF16, ldd=n, x=x, ldx=k, c=c_ptr, ldc=n, bias=bias, m=m, alpha=1.0, beta=0.5, act=0,
                 ws=ws_bad, ws_bytes=1 << 20)
        a.update(over)
        return lambda: fns[fn_name](a["d"], a["d_dtype"], a["ldd"], a["x"], a["ldx"], ctypes.byref(wt), a["c"],
                                    a["ldc"], a["bias"], a["m"], a["alpha"], a["beta"], a["act"], a["ws"],
                                    a["ws_bytes"], None)

    last = "workspace is not 256-byte aligned"
    expect("valid arguments", last, gemm(w), "gk_w4_gemm_bf16")
    wf = GkW4Weight.from_buffer_copy(w)
    wf.dtype = GK_F16
    expect("valid f16 arguments", last, gemm(wf, "gk_w4_gemm_f16"), "gk_w4_gemm_f16")
    expect("an f16 weight", "prepacked for f16 activations, x is bf16", gemm(wf), "gk_w4_gemm_bf16")
    for field, value, needle in (("packed", packed + 16, "w->packed is not 256-byte aligned"),
                                 ("n", 12, "n = 12 is not a multiple of 8"),
                                 ("k", 100, "k = 100 is not a multiple of 64"),
                                 ("group", 96, "group = 96 is not 32, 64, 128 or k"),
                                 ("zero_mode", 5, "zero_mode 5 is not a gk_w4_zeros"),
                                 ("dtype", GK_F32, "w->dtype 0 is not GK_BF16 or GK_F16")):
        bad = GkW4Weight.from_buffer_copy(w)
        setattr(bad, field, value)
        expect("w->%s %r" % (field, value), needle, gemm(bad), "gk_w4_gemm_bf16")
    for arg, value, needle in (("d", None, "'d' is a null pointer"), ("x", None, "'x' is a null pointer"),
                               ("d_dtype", 9, "d_dtype 9 is not"), ("ldd", n - 8, "ldd = %d is smaller than n" % (n - 8)),
                               ("ldx", k + 4, "ldx = %d a multiple of 8" % (k + 4)),
                               ("ldc", n - 8, "ldc = %d is smaller than n" % (n - 8)),
                               ("bias", bias + 2, "'bias'"), ("act", 9, "act 9 is not a gk_act"),
                               ("m", -1, "'m' is -1")):
        expect("%s %r" % (arg, value), needle, gemm(w, **{arg: value}), "gk_w4_gemm_bf16")

    def ex(config, warps):
        return lambda: fns["gk_w4_gemm_ex"](config, warps, d, GK_BF16, n, x, k, ctypes.byref(w), c_ptr, n, bias, m,
                                            1.0, 0.5, 0, ws_bad, 1 << 20, None)

    expect("valid arguments", last, ex(-1, 0), "gk_w4_gemm_ex")
    expect("config", "config %d is not -1 or 0..%d" % (count + 1, count), ex(count + 1, 0), "gk_w4_gemm_ex")
    expect("warps", "warps = -3 is negative", ex(-1, -3), "gk_w4_gemm_ex")

    def dequant(dst, ld, wt=w):
        return lambda: fns["gk_w4_dequant"](dst, ld, ctypes.byref(wt), None)

    expect("dst on the packed weight (the last check)", "'dst' and 'w->packed' overlap", dequant(packed + 256, k),
           "gk_w4_dequant")
    expect("lddst", "lddst = %d is smaller than k = %d" % (k - 64, k), dequant(d, k - 64), "gk_w4_dequant")
    expect("dst NULL", "'dst' is a null pointer", dequant(None, k), "gk_w4_dequant")

    q, scales, zeros = base + (6 << 20), base + (7 << 20), base + (8 << 20)

    def prepack(**over):
        a = dict(packed=packed, dtype=GK_BF16, q=q, scales=scales, scale_dtype=GK_F16, zeros=zeros, n=n, k=k,
                 group=group, zero_mode=GK_W4_ZEROS_INT4)
        a.update(over)
        return lambda: fns["gk_w4_prepack"](a["packed"], a["dtype"], a["q"], a["scales"], a["scale_dtype"], a["zeros"],
                                            a["n"], a["k"], a["group"], a["zero_mode"], None)

    expect("q inside packed (the last check)", "'packed' and 'q' overlap", prepack(q=packed + 512), "gk_w4_prepack")
    expect("zeros inside packed", "'packed' and 'zeros' overlap", prepack(zeros=packed + 512), "gk_w4_prepack")
    expect("dtype", "dtype 0 is not GK_BF16 or GK_F16", prepack(dtype=GK_F32), "gk_w4_prepack")
    expect("scale_dtype", "scale_dtype 3 is not GK_BF16, GK_F16 or GK_F32", prepack(scale_dtype=GK_E4M3),
           "gk_w4_prepack")
    expect("scales NULL", "'scales' is a null pointer", prepack(scales=None), "gk_w4_prepack")
    expect("zeros with GK_W4_SYMMETRIC", "zeros is given but zero_mode is GK_W4_SYMMETRIC",
           prepack(zero_mode=GK_W4_SYMMETRIC), "gk_w4_prepack")
    expect("group", "group = 48 is not", prepack(group=48), "gk_w4_prepack")

    qw, qz = base + (9 << 20), base + (10 << 20)
    order = (ctypes.c_int32 * k)(*[(i // group) ^ 1 if i < 2 * group else i // group for i in range(k)])
    expect("act-order g_idx", "act-order checkpoints are not supported",
           lambda: fns["gk_w4_from_gptq"](q, zeros, qw, qz, order, n, k, group, 1, None), "gk_w4_from_gptq")
    expect("zero_offset", "zero_offset = 2 is not 0",
           lambda: fns["gk_w4_from_gptq"](q, zeros, qw, qz, None, n, k, group, 2, None), "gk_w4_from_gptq")
    expect("q on qweight (the last check)", "'q' and 'qweight' overlap",
           lambda: fns["gk_w4_from_gptq"](q, zeros, q + 16, qz, None, n, k, group, 1, None), "gk_w4_from_gptq")
    expect("q on qweight (the last check)", "'q' and 'qweight' overlap",
           lambda: fns["gk_w4_from_awq"](q, zeros, q + 16, qz, n, k, group, None), "gk_w4_from_awq")
    expect("qzeros NULL", "'qzeros' is a null pointer",
           lambda: fns["gk_w4_from_awq"](q, zeros, qw, None, n, k, group, None), "gk_w4_from_awq")
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
