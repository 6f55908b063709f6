#!/usr/bin/env python3
"""libgk.so through Python's ctypes, as an FFI caller uses gk.

    ctypes_test.py LIBGK_SO HEADER... [GK_CTYPES_PY]

Every function the headers declare public (GK_DECL) must be exported under its plain name; the
ledgers return their structs by value; a bad argument to a launcher of each header returns
cudaErrorInvalidValue (1) with a reason that names the function. With GK_CTYPES_PY
(gk_bench/compare/gk_ctypes.py, the declarations the comparison scripts use), its struct mirrors
(gk_attention_params, gk_paged_kv, gk_rope, gk_rope_append_params, gk_paged_decode_params,
gk_paged_decode_config, gk_paged_decode_plan: their sizes and offsets, and their fields through host
calls) are checked against the library and every function it declares must be public. None of it
needs a GPU.
"""
import ctypes
import importlib.util
import os
import re
import sys

# Public functions since gk_paged.cuh's decode attention (80 before it, 8 of its own): fewer means
# the scan below lost some (or a header lost its declarations).
MIN_PUBLIC = 88
ATTENTION_API = ["gk_attention_config_count", "gk_attention_config_info", "gk_attention_ex", "gk_attention_fwd_bf16",
                 "gk_attention_fwd_f16", "gk_attention_ledger", "gk_attention_params_dense",
                 "gk_attention_workspace_bytes"]
PAGED_API = ["gk_paged_kv_dense", "gk_rope_append_bf16", "gk_rope_append_f16", "gk_rope_append_ledger",
             "gk_rope_default", "gk_paged_decode_params_dense", "gk_paged_decode_bf16", "gk_paged_decode_f16",
             "gk_paged_decode_ex", "gk_paged_decode_plan_for", "gk_paged_decode_config_count",
             "gk_paged_decode_config_info", "gk_paged_decode_ledger"]

CUDA_ERROR_INVALID_VALUE = 1
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL " + what)


def declared_names(headers):
    """Names of the functions the headers declare with GK_DECL (the public API)."""
    names = []
    for path in headers:
        text = re.sub(r"/\*.*?\*/", "", open(path).read(), flags=re.S)
        for m in re.finditer(r"\bGK_DECL\b[^;{]*?\b(gk_\w+)\s*\(", text):
            names.append(m.group(1))
    return sorted(set(names))


class Ledger(ctypes.Structure):
    _fields_ = [("flops", ctypes.c_double), ("bytes", ctypes.c_double)]


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    lib_path = sys.argv[1]
    headers = [a for a in sys.argv[2:] if not a.endswith(".py")]
    modules = [a for a in sys.argv[2:] if a.endswith(".py")]
    lib = ctypes.CDLL(lib_path)
    names = declared_names(headers)
    check(len(names) >= MIN_PUBLIC, "only %d public functions found in %s (at least %d expected)" %
          (len(names), " ".join(headers), MIN_PUBLIC))
    check(all(n in names for n in ATTENTION_API),
          "gk_attention.cuh's API not all found: missing %s" % [n for n in ATTENTION_API if n not in names])
    check(all(n in names for n in PAGED_API),
          "gk_paged.cuh's API not all found: missing %s" % [n for n in PAGED_API if n not in names])
    missing = [n for n in names if not hasattr(lib, n)]
    check(not missing, "not exported under their plain names: " + " ".join(missing))
    print("%d public functions declared, %d exported" % (len(names), len(names) - len(missing)))

    reason = lib.gk_failure_reason
    reason.restype = ctypes.c_char_p
    reason.argtypes = []
    P, I64, F, I, S = ctypes.c_void_p, ctypes.c_int64, ctypes.c_float, ctypes.c_int, ctypes.c_size_t
    fake = 0x10000000

    def rejected(fn_name, args, argtypes, needle):
        fn = getattr(lib, fn_name)
        fn.restype = ctypes.c_int
        fn.argtypes = argtypes
        e = fn(*args)
        r = (reason() or b"").decode()
        check(e == CUDA_ERROR_INVALID_VALUE, "%s returned %d, want cudaErrorInvalidValue (%s)" % (fn_name, e, r))
        check(r.startswith(fn_name + ": "), "%s: reason %r does not name it" % (fn_name, r))
        check(needle in r, "%s: reason %r lacks %r" % (fn_name, r, needle))

    rejected("gk_add_f32", [P(fake), P(fake + (1 << 20)), None, 16, None], [P, P, P, I64, P], "'b' is a null pointer")
    rejected("gk_layernorm_bf16", [P(fake), 64, P(fake + (1 << 20)), 64, None, None, -2, 64, F(1e-5), None],
             [P, I64, P, I64, P, P, I64, I64, F, P], "'rows' is -2")
    rejected("gk_gemm_f32_pipelined", [P(fake), 8, P(fake + (1 << 20)), 8, P(fake + (2 << 20)), 4, 8, 8, 8, F(1), F(0), None],
             [P, I64, P, I64, P, I64, I64, I64, I64, F, F, P], "ldb = 4 is smaller than n = 8")
    gemm_types = [P, I, I64, P, I64, I, P, I64, I, P, I64, P, I64, I64, I64, F, F, I, P, S, P]
    rejected("gk_gemm_bf16", [P(fake), 1, 64, P(fake + (1 << 20)), 64, 0, P(fake + (2 << 20)), 64, 9, None, 0, None,
                              64, 64, 64, F(1), F(0), 0, None, 0, None], gemm_types, "trans_b = 9 is not 0 or 1")

    # an empty problem succeeds and clears the reason
    add = lib.gk_add_f32
    check(add(None, None, None, 0, None) == 0, "gk_add_f32 with n = 0 failed")
    check((reason() or b"") == b"", "a successful call left the reason %r" % reason())

    # ledgers by value
    lib.gk_gemm_ledger.restype = Ledger
    lib.gk_gemm_ledger.argtypes = [I64, I64, I64, I, I, I, I]
    l = lib.gk_gemm_ledger(128, 256, 512, 1, 1, 0, 0)
    check(l.flops == 2.0 * 128 * 256 * 512, "gk_gemm_ledger flops %g" % l.flops)
    check(l.bytes == (128 * 512 + 512 * 256) * 2 + 128 * 256 * 2, "gk_gemm_ledger bytes %g" % l.bytes)
    lib.gk_reduce_ledger.restype = Ledger
    lib.gk_reduce_ledger.argtypes = [I, I, I64, I64]
    l = lib.gk_reduce_ledger(2, 0, 10, 100)  # softmax, f32
    check(l.bytes == 10 * 100 * 8, "gk_reduce_ledger bytes %g" % l.bytes)
    lib.gk_dtype_name.restype = ctypes.c_char_p
    check(lib.gk_dtype_name(2) == b"f16", "gk_dtype_name(2) is %r" % lib.gk_dtype_name(2))

    # gk_ctypes.py: its struct mirrors against the library, its functions public, and an attention
    # call through its gk_attention_params refused (heads_q not a multiple of heads_kv)
    for path in modules:
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for problem in mod.check_layouts(lib_path):
            check(False, "%s: %s" % (path, problem))
        unknown = [n for n in mod.SIGNATURES if n not in names]
        check(not unknown, "%s declares functions no header declares public: %s" % (path, " ".join(unknown)))
        restype, argtypes = mod.SIGNATURES["gk_attention_params_dense"]
        lib.gk_attention_params_dense.restype, lib.gk_attention_params_dense.argtypes = restype, argtypes
        p = lib.gk_attention_params_dense(1, 6, 4, 64, 16, 16)
        rejected("gk_attention_fwd_bf16", [P(fake), P(fake + (1 << 20)), P(fake + (2 << 20)), P(fake + (3 << 20)),
                                           None, ctypes.byref(p), None, 0, None],
                 mod.SIGNATURES["gk_attention_fwd_bf16"][1], "heads_q (6) is not a multiple of heads_kv (4)")
        # and a gk_rope_append_f16 call through its gk_paged.cuh mirrors, refused (the cache's heads)
        for name in ("gk_paged_kv_dense", "gk_rope_default"):
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = mod.SIGNATURES[name]
        kv = lib.gk_paged_kv_dense(P(fake + (4 << 20)), P(fake + (5 << 20)), 2, 8, 16, 2, 64)
        rope = lib.gk_rope_default(64, F(10000.0))
        rp = mod.GkRopeAppendParams(tokens=3, heads_q=8, heads_kv=4, head_dim=64, q_token_stride=512,
                                    q_head_stride=64, k_token_stride=256, k_head_stride=64, v_token_stride=256,
                                    v_head_stride=64, q_out_token_stride=512, q_out_head_stride=64,
                                    positions=fake + (6 << 20), slot_mapping=fake + (7 << 20))
        rejected("gk_rope_append_f16", [P(fake), P(fake + (1 << 20)), P(fake + (2 << 20)), P(fake + (3 << 20)),
                                        ctypes.byref(rp), ctypes.byref(rope), ctypes.byref(kv), None],
                 mod.SIGNATURES["gk_rope_append_f16"][1], "the cache holds 2 heads of 64, the tokens 4 heads of 64")
        # and a gk_paged_decode_f16 call through its decode mirror, refused (the same cache, 4 kv heads),
        # and the plan of that problem: config -1, the reason named after gk_paged_decode_plan_for
        restype, argtypes = mod.SIGNATURES["gk_paged_decode_params_dense"]
        lib.gk_paged_decode_params_dense.restype, lib.gk_paged_decode_params_dense.argtypes = restype, argtypes
        dp = lib.gk_paged_decode_params_dense(2, 8, 4, 64, 1, P(fake + (8 << 20)), 4, P(fake + (9 << 20)), 64)
        rejected("gk_paged_decode_f16", [P(fake), None, P(fake + (1 << 20)), ctypes.byref(kv), ctypes.byref(dp), None, 0,
                                         None],
                 mod.SIGNATURES["gk_paged_decode_f16"][1], "the cache holds 2 heads of 64, the problem 4 heads of 64")
        plan_for = lib.gk_paged_decode_plan_for
        plan_for.restype, plan_for.argtypes = mod.SIGNATURES["gk_paged_decode_plan_for"]
        plan = plan_for(ctypes.byref(dp), ctypes.byref(kv))
        r = reason() or b""
        check(plan.config == -1 and r.startswith(b"gk_paged_decode_plan_for: ") and b"4 heads of 64" in r,
              "gk_paged_decode_plan_for of a refused problem: config %d, reason %r" % (plan.config, r))

    print("ctypes_test: %d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
