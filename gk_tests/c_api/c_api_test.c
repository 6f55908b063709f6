/* gk from C: this file is compiled by gcc as C11 (-pedantic, warnings are errors) and includes
   every gk header without GK_IMPLEMENTATION; it links against libgk.so, which nvcc compiled from
   the headers' implementation (gk_all.cu). Without a GPU it checks the C-visible types, the ledgers
   and that a bad argument to a launcher of every header returns cudaErrorInvalidValue with the
   reason; with one it also runs a launcher of every header and checks the results against a
   reference computed here. GK_TEST_REQUIRE_GPU=1 makes a missing GPU a failure. */
#include "gk/gk_attention.cuh"
#include "gk/gk_attention_sm90.cuh"
#include "gk/gk_core.cuh"
#include "gk/gk_elementwise.cuh"
#include "gk/gk_fp8.cuh"
#include "gk/gk_gemm.cuh"
#include "gk/gk_gemm_sm90.cuh"
#include "gk/gk_mma.cuh"
#include "gk/gk_paged.cuh"
#include "gk/gk_quant.cuh"
#include "gk/gk_reduce.cuh"
#include "gk/gk_sgemm.cuh"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert(sizeof(gk_bf16) == 2, "gk_bf16 is 2 bytes in C");
_Static_assert(sizeof(gk_f16) == 2, "gk_f16 is 2 bytes in C");
_Static_assert(sizeof(gk_e4m3) == 1 && sizeof(gk_e5m2) == 1 && sizeof(gk_int4x2) == 1, "fp8 and int4x2 are bytes");

/* gk_paged.cuh's decode structs as FFI mirrors lay them out (x86-64, LP64): gk_bench/compare/
   gk_ctypes.py's DECODE_LAYOUTS holds the same numbers and checks its ctypes mirrors against them. A
   change here is a change of the C ABI: update the mirrors with it. */
_Static_assert(sizeof(gk_paged_decode_params) == 136, "gk_paged_decode_params: 136 bytes");
_Static_assert(offsetof(gk_paged_decode_params, queries) == 16 && offsetof(gk_paged_decode_params, q_batch_stride) == 24 &&
                   offsetof(gk_paged_decode_params, out_head_stride) == 64 &&
                   offsetof(gk_paged_decode_params, block_table) == 72 &&
                   offsetof(gk_paged_decode_params, block_table_stride) == 80 &&
                   offsetof(gk_paged_decode_params, seq_lens) == 88 && offsetof(gk_paged_decode_params, max_seq_len) == 96 &&
                   offsetof(gk_paged_decode_params, window_left) == 108 &&
                   offsetof(gk_paged_decode_params, alibi_slopes) == 112 &&
                   offsetof(gk_paged_decode_params, error_flag) == 120 &&
                   offsetof(gk_paged_decode_params, host_seq_lens) == 128,
               "gk_paged_decode_params: the offsets gk_ctypes.py's mirror has");
_Static_assert(sizeof(gk_paged_decode_config) == 32 && offsetof(gk_paged_decode_config, head_dim) == 8 &&
                   offsetof(gk_paged_decode_config, smem_bytes) == 28,
               "gk_paged_decode_config: the layout gk_ctypes.py's mirror has");
_Static_assert(sizeof(gk_paged_decode_plan) == 24 && offsetof(gk_paged_decode_plan, split_keys) == 8 &&
                   offsetof(gk_paged_decode_plan, workspace_bytes) == 16,
               "gk_paged_decode_plan: the layout gk_ctypes.py's mirror has");

static int checks, failures;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        checks++;                                                               \
        if (!(cond)) {                                                          \
            failures++;                                                         \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                         \
            printf(__VA_ARGS__);                                                \
            printf("\n");                                                       \
        }                                                                       \
    } while (0)

/* e is cudaErrorInvalidValue and the reason is "<fn>: ...<needle>...". */
static void expect_rejected(cudaError_t e, const char *fn, const char *needle)
{
    const char *r = gk_failure_reason();
    CHECK(e == cudaErrorInvalidValue, "%s returned %d, want cudaErrorInvalidValue (reason \"%s\")", fn, (int)e, r);
    CHECK(strncmp(r, fn, strlen(fn)) == 0 && r[strlen(fn)] == ':', "%s: reason \"%s\" does not name it", fn, r);
    CHECK(strstr(r, needle) != NULL, "%s: reason \"%s\" lacks \"%s\"", fn, r, needle);
}

/* Device-looking addresses, never dereferenced: each call below fails validation first. */
#define FAKE(offset) ((void *)(uintptr_t)(0x10000000u + (offset)))

static void test_types_and_ledgers(void)
{
    gk_ledger l;
    CHECK(strcmp(gk_dtype_name(GK_BF16), "bf16") == 0, "gk_dtype_name(GK_BF16) is %s", gk_dtype_name(GK_BF16));
    CHECK(gk_dtype_size(GK_E4M3) == 1 && gk_dtype_size(GK_F32) == 4, "gk_dtype_size");
    l = gk_elementwise_ledger(GK_EW_ADD, GK_F32, GK_F32, 2, 1000);
    CHECK(l.bytes == 12000.0 && l.flops == 1000.0, "add ledger %g bytes %g flops", l.bytes, l.flops);
    l = gk_reduce_ledger(GK_RD_RMSNORM, GK_BF16, 4, 8);
    CHECK(l.bytes == 4 * 8 * 2 * 2 + 8 * 2 && l.flops == 4 * 8 * 4, "rmsnorm ledger %g bytes %g flops", l.bytes, l.flops);
    l = gk_gemm_ledger(16, 32, 64, GK_BF16, GK_F32, 0, 1);
    CHECK(l.flops == 2.0 * 16 * 32 * 64 && l.bytes == (16.0 * 64 + 64.0 * 32) * 2 + 16.0 * 32 * 4 + 4.0 * 32,
          "gemm ledger %g bytes %g flops", l.bytes, l.flops);
    CHECK(gk_roofline_seconds(l, 1e12, 0) == l.flops / 1e12, "gk_roofline_seconds");
    CHECK(gk_gemm_config_count() > 0, "gk_gemm_config_count() is %d", gk_gemm_config_count());
    CHECK(gk_gemm_config_info(0).name != NULL && gk_gemm_config_info(-1).name == NULL, "gk_gemm_config_info");
    {
        gk_gemm_plan p = gk_gemm_plan_for(4096, 4096, 4096, 0, 4096, 1, 4096);
        CHECK(p.config >= 0 && p.splits >= 1, "gk_gemm_plan_for: config %d, splits %d", p.config, p.splits);
    }
    {
        /* attention: the dense parameters, the ledger (the causal mask's visible pairs), the configurations */
        gk_attention_params ap = gk_attention_params_dense(2, 8, 2, 64, 128, 256);
        int c, n = gk_attention_config_count();
        CHECK(ap.q_head_stride == 64 && ap.q_row_stride == 8 * 64 && ap.q_batch_stride == 128 * 8 * 64 &&
                  ap.k_head_stride == 64 && ap.k_row_stride == 2 * 64 && ap.k_batch_stride == 256 * 2 * 64 &&
                  ap.v_row_stride == 2 * 64 && ap.out_row_stride == 8 * 64 && ap.out_batch_stride == 128 * 8 * 64 &&
                  ap.cu_seqlens_q == NULL && ap.cu_seqlens_k == NULL && ap.scale == 0.0f && ap.softcap == 0.0f &&
                  ap.causal == 0 && ap.window_left == -1 && ap.window_right == -1,
              "gk_attention_params_dense");
        l = gk_attention_ledger(&ap, GK_BF16);
        CHECK(l.flops == 4.0 * 2 * 8 * 64 * 128 * 256 && l.bytes == 2.0 * 64 * 2 * (2 * 128 * 8 + 2 * 256 * 2),
              "attention ledger %g bytes %g flops", l.bytes, l.flops);
        ap.causal = 1; /* bottom-right: row i sees keys 0 .. i + 128 */
        l = gk_attention_ledger(&ap, GK_BF16);
        CHECK(l.flops == 4.0 * 2 * 8 * 64 * (128.0 * 129 + 127.0 * 128 / 2), "causal attention ledger %g flops", l.flops);
        CHECK(n > 0, "gk_attention_config_count() is %d", n);
        CHECK(gk_attention_config_info(-1).name == NULL && gk_attention_config_info(n).name == NULL,
              "gk_attention_config_info of an unknown index");
        for (c = 0; c < n; c++) {
            const gk_attention_config i = gk_attention_config_info(c);
            CHECK(i.name != NULL && i.head_dim >= 8 && i.head_dim <= 256 && i.head_dim % 8 == 0 && i.bm > 0 && i.bn > 0 &&
                      i.threads > 0 && i.smem_bytes > 0 && (i.wgmma == 0 || i.wgmma == 1),
                  "gk_attention_config_info(%d): %s, D %d, %d x %d, %d threads, %d bytes, wgmma %d", c,
                  i.name ? i.name : "(null)", i.head_dim, i.bm, i.bn, i.threads, i.smem_bytes, i.wgmma);
        }
    }
    {
        /* paged: the dense cache's strides, the default rope, the ledger, gk_rope_freq (host code in C too) */
        const gk_paged_kv kv = gk_paged_kv_dense(FAKE(0), FAKE(1 << 20), GK_E4M3, 7, 16, 2, 64);
        gk_rope r = gk_rope_default(64, 10000.0f);
        gk_rope_append_params rp;
        memset(&rp, 0, sizeof rp);
        CHECK(kv.k_cache == FAKE(0) && kv.v_cache == FAKE(1 << 20) && kv.dtype == GK_E4M3 && kv.num_blocks == 7 &&
                  kv.block_size == 16 && kv.heads_kv == 2 && kv.head_dim == 64 && kv.k_head_stride == 64 &&
                  kv.k_slot_stride == 128 && kv.k_block_stride == 2048 && kv.v_head_stride == 64 &&
                  kv.v_slot_stride == 128 && kv.v_block_stride == 2048 && kv.k_scale == 1.0f && kv.v_scale == 1.0f,
              "gk_paged_kv_dense");
        CHECK(r.style == GK_ROPE_NEOX && r.rotary_dim == 64 && r.theta == 10000.0f && r.cos_sin == NULL &&
                  r.max_position == 0 && r.factor == 0.0f,
              "gk_rope_default");
        CHECK(gk_rope_freq(&r, 0) == 1.0 && fabs(gk_rope_freq(&r, 16) - 0.01) < 1e-15,
              "gk_rope_freq: %.17g, %.17g (want 1, 10000^-0.5)", gk_rope_freq(&r, 0), gk_rope_freq(&r, 16));
        r.factor = 8.0f, r.low_freq_factor = 1.0f, r.high_freq_factor = 4.0f, r.original_max_position = 8192;
        /* 10000^-(62/64): a wavelength of 46000 > 8192: divided by 8 */
        CHECK(fabs(gk_rope_freq(&r, 31) - pow(10000.0, -62.0 / 64) / 8) < 1e-18, "gk_rope_freq, Llama-3.1: %.17g",
              gk_rope_freq(&r, 31));
        rp.tokens = 10, rp.heads_q = 8, rp.heads_kv = 2, rp.head_dim = 64;
        l = gk_rope_append_ledger(&rp, GK_F16, GK_E4M3);
        CHECK(l.bytes == 10.0 * 64 * (2 * 8 * 2 + 2 * 2 * 2 + 2 * 2 * 1) + 10 * 4 + 10 * 8, "rope append ledger %g bytes",
              l.bytes);
    }
    {
        /* paged decode: the dense parameters, the ledger (host lengths or max_seq_len; 2 queries: causal among
           themselves), the configurations, a plan refused */
        const int lens[3] = {5, 1, 33};
        gk_paged_decode_params dp = gk_paged_decode_params_dense(3, 8, 2, 64, 2, (const int *)FAKE(0), 3,
                                                                 (const int *)FAKE(1 << 20), 40);
        const gk_paged_kv kv = gk_paged_kv_dense(FAKE(2 << 20), FAKE(3 << 20), GK_BF16, 9, 16, 2, 64);
        gk_paged_decode_plan pl;
        int c, n = gk_paged_decode_config_count();
        CHECK(dp.batch == 3 && dp.heads_q == 8 && dp.heads_kv == 2 && dp.head_dim == 64 && dp.queries == 2 &&
                  dp.q_head_stride == 64 && dp.q_row_stride == 8 * 64 && dp.q_batch_stride == 2 * 8 * 64 &&
                  dp.out_head_stride == 64 && dp.out_row_stride == 8 * 64 && dp.out_batch_stride == 2 * 8 * 64 &&
                  dp.block_table == (const int *)FAKE(0) && dp.block_table_stride == 3 &&
                  dp.seq_lens == (const int *)FAKE(1 << 20) && dp.max_seq_len == 40 && dp.scale == 0.0f &&
                  dp.softcap == 0.0f && dp.window_left < 0 && dp.alibi_slopes == NULL && dp.error_flag == NULL &&
                  dp.host_seq_lens == NULL,
              "gk_paged_decode_params_dense");
        /* query 0 at L - 2 sees L - 1 keys, query 1 all L; a length-1 sequence's query 0 sees none */
        l = gk_paged_decode_ledger(&dp, GK_BF16, GK_E4M3, lens);
        CHECK(l.flops == 4.0 * 8 * 64 * ((4 + 5) + (0 + 1) + (32 + 33)) &&
                  l.bytes == (5.0 + 1 + 33) * 2 * 64 * 1 * 2 + 2.0 * 3 * 2 * 8 * 64 * 2 + 3 * 4,
              "paged decode ledger %g bytes %g flops", l.bytes, l.flops);
        l = gk_paged_decode_ledger(&dp, GK_BF16, GK_BF16, NULL);
        CHECK(l.flops == 4.0 * 8 * 64 * 3 * (39 + 40) && l.bytes == 3.0 * 40 * 2 * 64 * 2 * 2 + 2.0 * 3 * 2 * 8 * 64 * 2 + 3 * 4,
              "paged decode ledger (max_seq_len) %g bytes %g flops", l.bytes, l.flops);
        CHECK(n > 0, "gk_paged_decode_config_count() is %d", n);
        CHECK(gk_paged_decode_config_info(-1).name == NULL && gk_paged_decode_config_info(n).name == NULL,
              "gk_paged_decode_config_info of an unknown index");
        for (c = 0; c < n; c++) {
            const gk_paged_decode_config i = gk_paged_decode_config_info(c);
            CHECK(i.name != NULL && (i.head_dim == 64 || i.head_dim == 128 || i.head_dim == 256) &&
                      (i.fp8 == 0 || i.fp8 == 1) && i.keys > 0 && i.keys % 16 == 0 && i.stages >= 1 && i.threads > 0 &&
                      i.threads % 32 == 0 && i.smem_bytes > 0,
                  "gk_paged_decode_config_info(%d): %s, D %d, fp8 %d, %d keys, %d stages, %d threads, %d bytes", c,
                  i.name ? i.name : "(null)", i.head_dim, i.fp8, i.keys, i.stages, i.threads, i.smem_bytes);
        }
        dp.heads_q = 6; /* not a multiple of the 2 kv heads... */
        dp.heads_kv = 4;
        pl = gk_paged_decode_plan_for(&dp, &kv);
        CHECK(pl.config == -1 && pl.workspace_bytes == 0, "gk_paged_decode_plan_for of a refused problem: config %d",
              pl.config);
        CHECK(strstr(gk_failure_reason(), "gk_paged_decode_plan_for: ") == gk_failure_reason() &&
                  strstr(gk_failure_reason(), "heads_q (6) is not a multiple of heads_kv (4)") != NULL,
              "gk_paged_decode_plan_for's reason \"%s\"", gk_failure_reason());
    }
}

static void test_bad_arguments(void)
{
    expect_rejected(gk_add_f32((float *)FAKE(0), (const float *)FAKE(1 << 20), NULL, 16, NULL), "gk_add_f32",
                    "'b' is a null pointer");
    expect_rejected(gk_swiglu_bf16((gk_bf16 *)FAKE(0), (const gk_bf16 *)FAKE(1 << 20), (const gk_bf16 *)FAKE(2 << 20),
                                   -5, NULL),
                    "gk_swiglu_bf16", "'n' is -5");
    expect_rejected(gk_rmsnorm_bf16((gk_bf16 *)FAKE(0), 64, (const gk_bf16 *)FAKE(1 << 20), 64, NULL, 8, -3, 1e-6f, NULL),
                    "gk_rmsnorm_bf16", "'cols' is -3");
    expect_rejected(gk_quant_e4m3_f16((gk_e4m3 *)FAKE(0), 64, NULL, (const gk_f16 *)FAKE(1 << 20), 64, 8, 64, NULL),
                    "gk_quant_e4m3_f16", "'scales' is a null pointer");
    expect_rejected(gk_gemm_f32((float *)FAKE(0), 8, (const float *)FAKE(1 << 20), 8, (const float *)FAKE(2 << 20), 8, -1,
                                8, 8, 1.0f, 0.0f, NULL),
                    "gk_gemm_f32", "'m' is -1");
    expect_rejected(gk_fp8_gemm(FAKE(0), GK_BF16, 64, (const gk_e4m3 *)FAKE(1 << 20), 72, NULL, GK_FP8_TENSOR,
                                (const gk_e4m3 *)FAKE(2 << 20), 64, NULL, GK_FP8_TENSOR, NULL, 0, NULL, 64, 64, 64, 1.0f,
                                0.0f, GK_ACT_NONE, NULL, 0, NULL),
                    "gk_fp8_gemm", "lda = 72 is not a multiple of 16");
    expect_rejected(gk_gemm_bf16(FAKE(0), GK_BF16, 64, (const gk_bf16 *)FAKE(1 << 20), 64, 2,
                                 (const gk_bf16 *)FAKE(2 << 20), 64, 1, NULL, 0, NULL, 64, 64, 64, 1.0f, 0.0f,
                                 GK_ACT_NONE, NULL, 0, NULL),
                    "gk_gemm_bf16", "trans_a = 2 is not 0 or 1");
    expect_rejected(gk_gemm_ex(-1, 0, GK_E4M3, FAKE(0), GK_BF16, 64, FAKE(1 << 20), 64, 0, FAKE(2 << 20), 64, 1, NULL, 0,
                               NULL, 64, 64, 64, 1.0f, 0.0f, GK_ACT_NONE, NULL, 0, NULL),
                    "gk_gemm_ex", "in_dtype 3 is not GK_BF16 or GK_F16");
    {
        gk_attention_params ap = gk_attention_params_dense(1, 6, 4, 64, 16, 16);
        const gk_bf16 *q = (const gk_bf16 *)FAKE(1 << 20), *k = (const gk_bf16 *)FAKE(2 << 20),
                      *v = (const gk_bf16 *)FAKE(3 << 20);
        expect_rejected(gk_attention_fwd_bf16((gk_bf16 *)FAKE(0), q, k, v, NULL, &ap, NULL, 0, NULL),
                        "gk_attention_fwd_bf16", "heads_q (6) is not a multiple of heads_kv (4)");
        ap = gk_attention_params_dense(1, 4, 4, 12, 16, 16);
        expect_rejected(gk_attention_fwd_f16((gk_f16 *)FAKE(0), (const gk_f16 *)q, (const gk_f16 *)k, (const gk_f16 *)v,
                                             NULL, &ap, NULL, 0, NULL),
                        "gk_attention_fwd_f16", "head_dim 12 is not supported");
        ap = gk_attention_params_dense(1, 4, 4, 64, 16, 16);
        expect_rejected(gk_attention_ex(-1, 0, GK_F32, FAKE(0), q, k, v, NULL, &ap, NULL, 0, NULL), "gk_attention_ex",
                        "dtype 0 is not GK_BF16 or GK_F16");
        expect_rejected(gk_attention_ex(gk_attention_config_count(), 0, GK_BF16, FAKE(0), q, k, v, NULL, &ap, NULL, 0, NULL),
                        "gk_attention_ex", "is not one of 0 ..");
        ap.q_row_stride = 4 * 64 + 4;
        expect_rejected(gk_attention_fwd_bf16((gk_bf16 *)FAKE(0), q, k, v, NULL, &ap, NULL, 0, NULL),
                        "gk_attention_fwd_bf16", "'q_row_stride' is 260, not a multiple of 8");
        ap.q_row_stride = 4 * 64;
        expect_rejected(gk_attention_fwd_bf16((gk_bf16 *)FAKE(0), (const gk_bf16 *)FAKE(0), k, v, NULL, &ap, NULL, 0, NULL),
                        "gk_attention_fwd_bf16", "'out' and 'q' overlap");
        ap.batch = 0; /* nothing to compute: succeeds without looking at the pointers */
        CHECK(gk_attention_fwd_bf16(NULL, NULL, NULL, NULL, NULL, &ap, NULL, 0, NULL) == cudaSuccess,
              "gk_attention_fwd_bf16 with batch 0: %s", gk_failure_reason());
    }
    {
        gk_paged_kv kv = gk_paged_kv_dense(FAKE(4 << 20), FAKE(5 << 20), GK_BF16, 8, 16, 2, 64);
        const gk_rope r = gk_rope_default(64, 10000.0f);
        gk_rope_append_params rp;
        memset(&rp, 0, sizeof rp);
        rp.tokens = 3, rp.heads_q = 6, rp.heads_kv = 4, rp.head_dim = 64;
        rp.q_token_stride = rp.q_out_token_stride = 6 * 64, rp.q_head_stride = rp.q_out_head_stride = 64;
        rp.k_token_stride = rp.v_token_stride = 4 * 64, rp.k_head_stride = rp.v_head_stride = 64;
        rp.positions = FAKE(6 << 20), rp.slot_mapping = (const int64_t *)FAKE(7 << 20);
        expect_rejected(gk_rope_append_bf16((gk_bf16 *)FAKE(0), (const gk_bf16 *)FAKE(1 << 20),
                                            (const gk_bf16 *)FAKE(2 << 20), (const gk_bf16 *)FAKE(3 << 20), &rp, &r, &kv,
                                            NULL),
                        "gk_rope_append_bf16", "heads_q (6) is not a multiple of heads_kv (4)");
        rp.heads_kv = 2;
        kv.dtype = GK_F32;
        expect_rejected(gk_rope_append_f16((gk_f16 *)FAKE(0), (const gk_f16 *)FAKE(1 << 20), (const gk_f16 *)FAKE(2 << 20),
                                           (const gk_f16 *)FAKE(3 << 20), &rp, &r, &kv, NULL),
                        "gk_rope_append_f16", "cache dtype f32");
        rp.tokens = 0; /* no tokens: succeeds without looking at the pointers */
        CHECK(gk_rope_append_bf16(NULL, NULL, NULL, NULL, &rp, &r, &kv, NULL) == cudaSuccess,
              "gk_rope_append_bf16 with 0 tokens: %s", gk_failure_reason());
    }
    {
        const gk_paged_kv kv = gk_paged_kv_dense(FAKE(4 << 20), FAKE(5 << 20), GK_BF16, 8, 16, 2, 64);
        gk_paged_decode_params dp = gk_paged_decode_params_dense(2, 6, 4, 64, 1, (const int *)FAKE(6 << 20), 4,
                                                                 (const int *)FAKE(7 << 20), 64);
        const gk_bf16 *q = (const gk_bf16 *)FAKE(1 << 20);
        gk_bf16 *out = (gk_bf16 *)FAKE(0);
        expect_rejected(gk_paged_decode_bf16(out, NULL, q, &kv, &dp, NULL, 0, NULL), "gk_paged_decode_bf16",
                        "heads_q (6) is not a multiple of heads_kv (4)");
        dp.heads_kv = 2;
        dp.queries = 17;
        expect_rejected(gk_paged_decode_f16((gk_f16 *)out, NULL, (const gk_f16 *)q, &kv, &dp, NULL, 0, NULL),
                        "gk_paged_decode_f16", "queries 17: 1 to 16");
        dp.queries = 1;
        dp.block_table_stride = 3; /* 64 tokens take 4 blocks of 16 */
        expect_rejected(gk_paged_decode_bf16(out, NULL, q, &kv, &dp, NULL, 0, NULL), "gk_paged_decode_bf16",
                        "block_table_stride 3 is under ceil(max_seq_len / block_size) = 4");
        dp.block_table_stride = 4;
        expect_rejected(gk_paged_decode_bf16(out, (float *)FAKE((8 << 20) + 2), q, &kv, &dp, NULL, 0, NULL),
                        "gk_paged_decode_bf16", "'lse'");
        expect_rejected(gk_paged_decode_ex(-1, 0, GK_F32, out, NULL, q, &kv, &dp, NULL, 0, NULL), "gk_paged_decode_ex",
                        "dtype f32: bf16 or f16");
        expect_rejected(gk_paged_decode_ex(gk_paged_decode_config_count(), 0, GK_BF16, out, NULL, q, &kv, &dp, NULL, 0,
                                           NULL),
                        "gk_paged_decode_ex", "is not one of 0 ..");
        expect_rejected(gk_paged_decode_bf16(out, NULL, q, &kv, &dp, FAKE((9 << 20) + 16), 1 << 20, NULL),
                        "gk_paged_decode_bf16", "workspace");
        dp.batch = 0; /* no sequences: succeeds without looking at the pointers */
        CHECK(gk_paged_decode_bf16(NULL, NULL, NULL, &kv, &dp, NULL, 0, NULL) == cudaSuccess,
              "gk_paged_decode_bf16 with batch 0: %s", gk_failure_reason());
    }
    /* an empty problem succeeds without looking at its pointers, and clears the reason */
    CHECK(gk_add_f32(NULL, NULL, NULL, 0, NULL) == cudaSuccess, "gk_add_f32 with n = 0");
    CHECK(gk_failure_reason()[0] == '\0', "a successful call leaves the reason \"%s\"", gk_failure_reason());
}

/* Without a GPU a valid call reaches the CUDA runtime, whose error comes back named after the
   function called. */
static void test_cuda_error_named(void)
{
    cudaError_t e = gk_add_f32((float *)FAKE(0), (const float *)FAKE(1 << 20), (const float *)FAKE(2 << 20), 16, NULL);
    const char *r = gk_failure_reason();
    CHECK(e != cudaSuccess, "gk_add_f32 succeeded without a GPU");
    CHECK(strncmp(r, "gk_add_f32: ", 12) == 0, "a CUDA error's reason is \"%s\", not named after gk_add_f32", r);
}

/* ---------------------------------------------------------------- with a GPU */

static unsigned short f32_to_bf16_bits(float f)
{
    unsigned u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even (finite inputs) */
    return (unsigned short)(u >> 16);
}

static float bf16_bits_to_f32(unsigned short h)
{
    unsigned u = (unsigned)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static float rnd(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 65536.0f * 4.0f - 2.0f;
}

/* The largest error of d [m, n] against a [m, k] b [k, n] in double, relative to the sum of
   |a b| over k (what fp32 accumulation's rounding scales with: k 2^-24 of it at most, with any
   cancellation); NaN counts. */
static double gemm_error(const float *a, const float *b, const float *d, int m, int n, int k)
{
    double worst = 0;
    int i, j, kk;
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) {
            double ref = 0, mag = 0, err;
            for (kk = 0; kk < k; kk++) {
                ref += (double)a[i * k + kk] * b[kk * n + j];
                mag += fabs((double)a[i * k + kk] * b[kk * n + j]);
            }
            err = fabs(d[i * n + j] - ref) / (1e-30 + mag);
            if (!(err <= worst)) worst = err;
        }
    return worst;
}

#define CUDA_OK(expr)                                                                               \
    do {                                                                                            \
        cudaError_t e_ = (expr);                                                                    \
        CHECK(e_ == cudaSuccess, "%s: %s (%s)", #expr, cudaGetErrorString(e_), gk_failure_reason()); \
        if (e_ != cudaSuccess) return;                                                              \
    } while (0)

static void test_on_gpu(unsigned seed)
{
    enum { N = 1000, R = 7, C = 300, M = 37, NN = 45, K = 29 }; /* every operand within the buffers below */
    static float a[N], b[N], out[N], x[R * C], w[C], y[R * C], ga[M * K], gb[K * NN], gd[M * NN];
    static unsigned short ha[M * K], hb[K * NN];
    float *da, *db, *dout;
    int i, j;
    double worst;
    for (i = 0; i < N; i++) a[i] = rnd(&seed), b[i] = rnd(&seed), out[i] = NAN;
    for (i = 0; i < R * C; i++) x[i] = rnd(&seed);
    for (i = 0; i < C; i++) w[i] = rnd(&seed);
    /* each buffer holds the largest operand put in it: a, x or A; b, w or B; out, y or D */
    CUDA_OK(cudaMalloc((void **)&da, 4 * 4096));
    CUDA_OK(cudaMalloc((void **)&db, 4 * 8192));
    CUDA_OK(cudaMalloc((void **)&dout, 4 * 4096));

    /* elementwise: out = a + b */
    CUDA_OK(cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dout, out, sizeof out, cudaMemcpyHostToDevice));
    CUDA_OK(gk_add_f32(dout, da, db, N, NULL));
    CUDA_OK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
    for (i = 0; i < N; i++) CHECK(out[i] == a[i] + b[i], "gk_add_f32[%d] = %g, want %g", i, out[i], a[i] + b[i]);

    /* reduce: RMSNorm of R rows of C */
    CUDA_OK(cudaMemcpy(da, x, sizeof x, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(db, w, sizeof w, cudaMemcpyHostToDevice));
    CUDA_OK(gk_rmsnorm_f32(dout, C, da, C, db, R, C, 1e-6f, NULL));
    CUDA_OK(cudaMemcpy(y, dout, sizeof y, cudaMemcpyDeviceToHost));
    worst = 0;
    for (i = 0; i < R; i++) {
        double ss = 0;
        for (j = 0; j < C; j++) ss += (double)x[i * C + j] * x[i * C + j];
        for (j = 0; j < C; j++) {
            const double ref = x[i * C + j] / sqrt(ss / C + 1e-6) * w[j], err = fabs(y[i * C + j] - ref) / (1e-6 + fabs(ref));
            if (!(err <= worst)) worst = err;
        }
    }
    CHECK(worst < 1e-5, "gk_rmsnorm_f32: relative error %g", worst);

    /* sgemm and the tensor-core GEMM: D[M, NN] = A[M, K] B[K, NN] (row-major), B's values bf16 */
    for (i = 0; i < M * K; i++) ha[i] = f32_to_bf16_bits(rnd(&seed)), ga[i] = bf16_bits_to_f32(ha[i]);
    for (i = 0; i < K * NN; i++) hb[i] = f32_to_bf16_bits(rnd(&seed)), gb[i] = bf16_bits_to_f32(hb[i]);
    CUDA_OK(cudaMemcpy(da, ga, sizeof ga, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(db, gb, sizeof gb, cudaMemcpyHostToDevice));
    CUDA_OK(gk_gemm_f32(dout, NN, da, K, db, NN, M, NN, K, 1.0f, 0.0f, NULL));
    CUDA_OK(cudaMemcpy(gd, dout, sizeof gd, cudaMemcpyDeviceToHost));
    worst = gemm_error(ga, gb, gd, M, NN, K);
    CHECK(worst < K * 0x1p-24, "gk_gemm_f32: error %g of the sum of |a b|", worst);
    CUDA_OK(cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(dout, 0xff, sizeof gd));
    CUDA_OK(gk_gemm_bf16(dout, GK_F32, NN, (const gk_bf16 *)da, K, 0, (const gk_bf16 *)db, NN, 0, NULL, 0, NULL, M, NN, K,
                         1.0f, 0.0f, GK_ACT_NONE, NULL, 0, NULL));
    CUDA_OK(cudaMemcpy(gd, dout, sizeof gd, cudaMemcpyDeviceToHost));
    worst = gemm_error(ga, gb, gd, M, NN, K);
    /* the tensor cores may round toward zero as they add: twice the bound */
    CHECK(worst < 2 * K * 0x1p-24, "gk_gemm_bf16 (fp32 out): error %g of the sum of |a b|", worst);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dout);
}

/* Attention: B 2, Hq 4 on Hkv 2 (GQA), D 64, Sq 37 < Sk 45 (tile tails; the causal mask aligned to
   the bottom-right corner), through the dispatcher, against the definition in double. out and lse
   start as NaN: every one must be written. */
static void test_attention_on_gpu(unsigned seed)
{
    enum { B = 2, HQ = 4, HKV = 2, D = 64, SQ = 37, SK = 45, NQ = B * SQ * HQ * D, NKV = B * SK * HKV * D };
    static unsigned short hq[NQ], hk[NKV], hv[NKV], ho[NQ];
    static float lse[B * HQ * SQ];
    static double w[SK];
    gk_attention_params ap = gk_attention_params_dense(B, HQ, HKV, D, SQ, SK);
    void *dq, *dk, *dv, *dout;
    float *dlse;
    double worst = 0, worst_lse = 0;
    int i, b, h, r, j, d, bad = 0;
    for (i = 0; i < NQ; i++) hq[i] = f32_to_bf16_bits(rnd(&seed));
    for (i = 0; i < NKV; i++) hk[i] = f32_to_bf16_bits(rnd(&seed)), hv[i] = f32_to_bf16_bits(rnd(&seed) * 0.5f);
    ap.causal = 1;
    CUDA_OK(cudaMalloc(&dq, sizeof hq));
    CUDA_OK(cudaMalloc(&dk, sizeof hk));
    CUDA_OK(cudaMalloc(&dv, sizeof hv));
    CUDA_OK(cudaMalloc(&dout, sizeof ho));
    CUDA_OK(cudaMalloc((void **)&dlse, sizeof lse));
    CUDA_OK(cudaMemcpy(dq, hq, sizeof hq, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dk, hk, sizeof hk, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dv, hv, sizeof hv, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(dout, 0xff, sizeof ho));
    CUDA_OK(cudaMemset(dlse, 0xff, sizeof lse));
    CUDA_OK(gk_attention_fwd_bf16((gk_bf16 *)dout, (const gk_bf16 *)dq, (const gk_bf16 *)dk, (const gk_bf16 *)dv, dlse,
                                  &ap, NULL, 0, NULL));
    CUDA_OK(cudaMemcpy(ho, dout, sizeof ho, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(lse, dlse, sizeof lse, cudaMemcpyDeviceToHost));
    for (b = 0; b < B; b++)
        for (h = 0; h < HQ; h++)
            for (r = 0; r < SQ; r++) {
                const unsigned short *q = hq + ((b * SQ + r) * HQ + h) * D;
                const int hkv = h / (HQ / HKV), last = r + SK - SQ; /* keys 0 .. last */
                double m = -INFINITY, sum = 0, e;
                for (j = 0; j <= last; j++) {
                    double dot = 0;
                    for (d = 0; d < D; d++) dot += (double)bf16_bits_to_f32(q[d]) * bf16_bits_to_f32(hk[((b * SK + j) * HKV + hkv) * D + d]);
                    w[j] = dot / 8.0; /* 1 / sqrt(64) */
                    if (w[j] > m) m = w[j];
                }
                for (j = 0; j <= last; j++) sum += (w[j] = exp(w[j] - m));
                e = fabs(lse[(b * HQ + h) * SQ + r] - (m + log(sum)));
                if (!(e <= worst_lse)) worst_lse = e;
                for (d = 0; d < D; d++) {
                    double ref = 0;
                    for (j = 0; j <= last; j++) ref += w[j] * bf16_bits_to_f32(hv[((b * SK + j) * HKV + hkv) * D + d]);
                    ref /= sum;
                    /* bf16 out (2^-9 relative) and P rounded to bf16 before P V (2^-9 of sum p |v|, |v| <= 1) */
                    e = fabs(bf16_bits_to_f32(ho[((b * SQ + r) * HQ + h) * D + d]) - ref);
                    if (!(e <= worst)) worst = e;
                    bad += !(e <= 1.0 / 256 + fabs(ref) / 128);
                }
            }
    CHECK(bad == 0, "gk_attention_fwd_bf16: %d outputs past the tolerance (largest error %g; NaN: not written)", bad, worst);
    CHECK(worst_lse <= 4e-3, "gk_attention_fwd_bf16: lse error %g (NaN: not written)", worst_lse);
    cudaFree(dq);
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(dout);
    cudaFree(dlse);
}

/* RoPE + cache append: 6 tokens, Hq 4 on Hkv 2, D 64, NeoX over all 64 dims, theta 10000, a bf16
   cache of 3 blocks of 16 slots; the slots scattered, one -1 (no cache write). Against the
   definition in double; every cache slot not written must still hold its poison. */
static void test_paged_on_gpu(unsigned seed)
{
    enum { T = 6, HQ = 4, HKV = 2, D = 64, NB = 3, BS = 16, NQ = T * HQ * D, NKV = T * HKV * D, NC = NB * BS * HKV * D };
    static unsigned short hq[NQ], hk[NKV], hv[NKV], ho[NQ], kc[NC], vc[NC];
    const int pos[T] = {0, 5, 17, 1000, 31, 65535};
    const int64_t slot[T] = {37, 2, -1, 20, 47, 16};
    gk_rope r = gk_rope_default(D, 10000.0f);
    gk_rope_append_params rp;
    gk_paged_kv kv;
    void *dq, *dk, *dv, *dout, *dkc, *dvc, *dpos, *dslot;
    int flag = -1, *dflag, i, t, h, d, bad = 0, untouched = 0, s;
    double worst = 0;
    for (i = 0; i < NQ; i++) hq[i] = f32_to_bf16_bits(rnd(&seed));
    for (i = 0; i < NKV; i++) hk[i] = f32_to_bf16_bits(rnd(&seed)), hv[i] = f32_to_bf16_bits(rnd(&seed));
    CUDA_OK(cudaMalloc(&dq, sizeof hq));
    CUDA_OK(cudaMalloc(&dk, sizeof hk));
    CUDA_OK(cudaMalloc(&dv, sizeof hv));
    CUDA_OK(cudaMalloc(&dout, sizeof ho));
    CUDA_OK(cudaMalloc(&dkc, sizeof kc));
    CUDA_OK(cudaMalloc(&dvc, sizeof vc));
    CUDA_OK(cudaMalloc(&dpos, sizeof pos));
    CUDA_OK(cudaMalloc(&dslot, sizeof slot));
    CUDA_OK(cudaMalloc((void **)&dflag, sizeof flag));
    CUDA_OK(cudaMemcpy(dq, hq, sizeof hq, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dk, hk, sizeof hk, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dv, hv, sizeof hv, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dpos, pos, sizeof pos, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dslot, slot, sizeof slot, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(dout, 0xff, sizeof ho));
    CUDA_OK(cudaMemset(dkc, 0xff, sizeof kc));
    CUDA_OK(cudaMemset(dvc, 0xff, sizeof vc));
    CUDA_OK(cudaMemset(dflag, 0, sizeof flag));
    memset(&rp, 0, sizeof rp);
    rp.tokens = T, rp.heads_q = HQ, rp.heads_kv = HKV, rp.head_dim = D;
    rp.q_token_stride = rp.q_out_token_stride = HQ * D, rp.q_head_stride = rp.q_out_head_stride = D;
    rp.k_token_stride = rp.v_token_stride = HKV * D, rp.k_head_stride = rp.v_head_stride = D;
    rp.positions = dpos, rp.slot_mapping = (const int64_t *)dslot, rp.error_flag = dflag;
    kv = gk_paged_kv_dense(dkc, dvc, GK_BF16, NB, BS, HKV, D);
    CUDA_OK(gk_rope_append_bf16((gk_bf16 *)dout, (const gk_bf16 *)dq, (const gk_bf16 *)dk, (const gk_bf16 *)dv, &rp, &r,
                                &kv, NULL));
    CUDA_OK(cudaMemcpy(ho, dout, sizeof ho, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(kc, dkc, sizeof kc, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(vc, dvc, sizeof vc, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(&flag, dflag, sizeof flag, cudaMemcpyDeviceToHost));
    CHECK(flag == 0, "gk_rope_append_bf16: error flag %d with every slot valid or -1", flag);
    for (t = 0; t < T; t++)
        for (h = 0; h < HQ + HKV; h++) {
            /* head h < HQ: q into q_out; else k rotated into its slot */
            const unsigned short *x = h < HQ ? hq + (t * HQ + h) * D : hk + (t * HKV + h - HQ) * D;
            const unsigned short *got = h < HQ ? ho + (t * HQ + h) * D : kc + (slot[t] * HKV + h - HQ) * D;
            if (h >= HQ && slot[t] < 0) continue;
            for (d = 0; d < D; d++) {
                const int j = d % (D / 2);                              /* pair j: dims j and j + D / 2 */
                const double a = pos[t] * pow(10000.0, -2.0 * j / D); /* the angle */
                const double x1 = bf16_bits_to_f32(x[j]), x2 = bf16_bits_to_f32(x[j + D / 2]);
                const double ref = d < D / 2 ? x1 * cos(a) - x2 * sin(a) : x2 * cos(a) + x1 * sin(a);
                const double e = fabs(bf16_bits_to_f32(got[d]) - ref);
                if (!(e <= worst)) worst = e;
                bad += !(e <= 1e-3 + fabs(ref) / 128);
            }
        }
    for (t = 0; t < T; t++) /* v copied as it is */
        for (h = 0; h < HKV && slot[t] >= 0; h++)
            for (d = 0; d < D; d++) bad += vc[(slot[t] * HKV + h) * D + d] != hv[(t * HKV + h) * D + d];
    for (s = 0; s < NB * BS; s++) { /* the slots no token names hold their poison */
        int named = 0;
        for (t = 0; t < T; t++) named |= slot[t] == s;
        for (i = 0; i < HKV * D && !named; i++) untouched += kc[s * HKV * D + i] != 0xffff || vc[s * HKV * D + i] != 0xffff;
    }
    CHECK(bad == 0, "gk_rope_append_bf16: %d outputs past the tolerance (largest error %g; NaN: not written)", bad, worst);
    CHECK(untouched == 0, "gk_rope_append_bf16: %d values written into cache slots no token names", untouched);
    cudaFree(dq);
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(dout);
    cudaFree(dkc);
    cudaFree(dvc);
    cudaFree(dpos);
    cudaFree(dslot);
    cudaFree(dflag);
}

int main(void)
{
    int count = 0;
    const char *req = getenv("GK_TEST_REQUIRE_GPU");
    const int require = req && strcmp(req, "1") == 0;
    cudaError_t e;
    test_types_and_ledgers();
    test_bad_arguments();
    e = cudaGetDeviceCount(&count);
    if (e == cudaSuccess && count > 0) {
        /* fresh inputs every run; GK_TEST_SEED replays one */
        const char *env = getenv("GK_TEST_SEED");
        const unsigned seed = env && *env ? (unsigned)strtoul(env, NULL, 0) : (unsigned)time(NULL) ^ (unsigned)clock();
        printf("c_api_test: seed %u (rerun with GK_TEST_SEED=%u)\n", seed, seed);
        test_on_gpu(seed);
        test_attention_on_gpu(seed + 1);
        test_paged_on_gpu(seed + 2);
        printf("c_api_test: ran the launchers on the GPU\n");
    } else {
        (void)cudaGetLastError();
        test_cuda_error_named();
        if (require) {
            failures++;
            printf("FAIL: GK_TEST_REQUIRE_GPU=1 and no CUDA device (%s)\n",
                   e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        } else {
            /* in GoogleTest's words, which .ci/run counts */
            printf("SKIPPED: the GPU part needs a CUDA device, and none is usable here (%s)\n",
                   e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
            printf("[  SKIPPED ] CApi.LaunchersOnTheGpu (0 ms)\n");
        }
    }
    printf("c_api_test: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
