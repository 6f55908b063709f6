/* gk_attention_sm90.cuh - gk attention on Hopper v0.1: the wgmma kernel fed by TMA, for
   gk_attention.cuh's dispatcher. Part of gk_attention.cuh, which includes it when
   GK_ATTENTION_SM90 is 1 (by default when nvcc targets compute capability 9.0): copy it beside
   gk_attention.cuh and include gk_attention.cuh. Its kernels have code in sm_90a images only
   (-gencode arch=compute_90a,code=sm_90a); the dispatcher uses them where the running image has
   it, for D = 64, 128 and 256 without cu_seqlens (varlen runs on the mma.sync kernel).

   HOW IT RUNS
     A block is 128 query rows of one (b, h) and three warpgroups. The producer (one thread)
     loads Q once and K and V tiles of BN keys into a ring of STAGES through 4-D TMA maps of the
     strided tensors (128-byte swizzle, zero fill past Sq and Sk); each tile has "full"
     mbarriers (TMA bytes) and "empty" ones (an arrival per consumer), K and V apart, so that
     S = Q K^T starts before V lands. Two consumer warpgroups take 64 rows each: S on
     wgmma.m64nBNk16 with Q and K from shared memory, the online softmax on its accumulators
     (gk_attn_softmax, the mma.sync kernel's), then O += P V on wgmma with P from registers (the
     accumulator layout is the A-fragment layout) and V MN-major from shared memory. Within a
     consumer, S of the next tile is issued before P V of this one and the softmax runs under
     that P V; between consumers, named barriers make them take turns issuing MMAs (ping-pong),
     so one's softmax runs while the other's MMAs hold the tensor cores. setmaxnreg gives the
     producer's registers to the consumers. O leaves through the consumer's half of the Q tile
     in 16-byte stores.

   GENERATOR
     GK_DEFINE_ATTENTION_WGMMA(name, dt, D, BN, STAGES, PINGPONG): the kernel and config for head
     dim D (64, 128 or 256), BN keys a tile (64 or 128), STAGES K / V stages, the consumers taking
     turns at the tensor cores (PINGPONG 1) or not.
*/
#include "gk_attention.cuh"

#if defined(__CUDACC__) && GK_ATTENTION_SM90 && !defined(GK_ATTENTION_SM90_CUH)
#define GK_ATTENTION_SM90_CUH

#define GK_ATTN_WG_THREADS 384
#define GK_ATTN_WG_BM 128
/* alignment slack, Q, the K and V stages, 1 + 4 STAGES mbarriers */
#define gk_attn_wg_smem_c(D, BN, STAGES) (1024 + GK_ATTN_WG_BM * (D) * 2 + 2 * (STAGES) * (BN) * (D) * 2 + 8 * (1 + 4 * (STAGES)))

/* S (64 x BN, overwritten) = Q K^T for this consumer's 64 rows (q: its first row in the Q tile),
   once tile kt has landed (full, phase): both K-major in 64-column panels, 32 bytes a k16 step
   within a panel. Issued and committed, not waited for. */
GK_DEV void gk_attn_wg_qk(float *s, const char *q, const char *kt, unsigned long long *full, int phase, int q_panel,
                          int kv_panel, int dt, int DK, int BN)
{
    gk_mbar_wait(full, phase);
    gk_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < DK / 16; kk++)
        gk_wgmma_m64k16(s, gk_wgmma_desc_sw128(q + (kk / 4) * q_panel + (kk % 4) * 32, 16),
                        gk_wgmma_desc_sw128(kt + (kk / 4) * kv_panel + (kk % 4) * 32, 16), dt, BN, 0, 0, kk > 0);
    gk_wgmma_commit();
}

/* O += P V: P from registers (BN / 16 k16 steps of 4), V MN-major in 64-column panels kv_panel
   bytes apart, 16 rows (2 KB) a k16 step. Not committed. */
GK_DEV void gk_attn_wg_pv(float *o, const unsigned *pa, const char *vt, int kv_panel, int dt, int DK, int BN)
{
    gk_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++)
        gk_wgmma_m64k16_rs(o, pa + 4 * kk, gk_wgmma_desc_sw128(vt + kk * 2048, kv_panel), dt, DK, 1);
}

GK_DEV void gk_attn_wg_run(const gk_attn_args *p, const CUtensorMap *tq, const CUtensorMap *tk, const CUtensorMap *tv,
                           int dt, int DK, int BN, int STAGES, int PINGPONG, float *s, float *o)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint4 gk_attn_wg_smem[];
    char *smem = gk_smem_align_1024(gk_attn_wg_smem);
    const int panels = DK / 64, tile_bytes = BN * DK * 2, q_panel = GK_ATTN_WG_BM * 128, kv_panel = BN * 128;
    char *sq = smem, *sk = sq + GK_ATTN_WG_BM * DK * 2, *sv = sk + STAGES * tile_bytes;
    unsigned long long *q_full = (unsigned long long *)(sv + STAGES * tile_bytes);
    unsigned long long *k_full = q_full + 1, *v_full = k_full + STAGES, *k_empty = v_full + STAGES,
                       *v_empty = k_empty + STAGES;
    const int h = blockIdx.y, b = blockIdx.z, hk = h / p->group, sq_len = p->sq, sk_len = p->sk, off = sk_len - sq_len;
    const int mtiles = (sq_len + GK_ATTN_WG_BM - 1) / GK_ATTN_WG_BM;
    const int m0 = (p->left >= 0 || p->right >= 0 ? mtiles - 1 - (int)blockIdx.x : (int)blockIdx.x) * GK_ATTN_WG_BM;
    int lo, hi;
    gk_attn_key_range(m0, min(m0 + GK_ATTN_WG_BM, sq_len), sq_len, sk_len, p->left, p->right, &lo, &hi);
    const int jb = lo / BN, je = hi > lo ? (hi + BN - 1) / BN : jb;
    /* D <= 128: the warpgroup known warp-uniform (H100: up to 2% faster); at D 256 that measured
       1.2% slower, so there it comes from threadIdx */
    const int wg = DK <= 128 ? gk_warp_uniform((int)(threadIdx.x >> 7)) : (int)(threadIdx.x >> 7);

    if (threadIdx.x == 0) {
        gk_mbar_init(q_full, 1);
        for (int i = 0; i < STAGES; i++) {
            gk_mbar_init(k_full + i, 1);
            gk_mbar_init(v_full + i, 1);
            gk_mbar_init(k_empty + i, 2);
            gk_mbar_init(v_empty + i, 2);
        }
        gk_mbar_init_fence();
    }
    __syncthreads();

    if (wg == 0) {
        gk_setmaxnreg_dec_40();
        if (threadIdx.x != 0) return;
        gk_mbar_arrive_expect_tx(q_full, GK_ATTN_WG_BM * DK * 2);
        for (int i = 0; i < panels; i++) gk_tma_load_4d(sq + i * q_panel, tq, q_full, i * 64, m0, h, b);
        for (int j = jb; j < je; j++) {
            const int it = j - jb, st = it % STAGES;
            if (it >= STAGES) gk_mbar_wait(k_empty + st, (it / STAGES - 1) & 1);
            gk_mbar_arrive_expect_tx(k_full + st, tile_bytes);
            for (int i = 0; i < panels; i++)
                gk_tma_load_4d(sk + st * tile_bytes + i * kv_panel, tk, k_full + st, i * 64, j * BN, hk, b);
            if (it >= STAGES) gk_mbar_wait(v_empty + st, (it / STAGES - 1) & 1);
            gk_mbar_arrive_expect_tx(v_full + st, tile_bytes);
            for (int i = 0; i < panels; i++)
                gk_tma_load_4d(sv + st * tile_bytes + i * kv_panel, tv, v_full + st, i * 64, j * BN, hk, b);
        }
        return;
    }

    gk_setmaxnreg_inc_232();
    const int w = wg - 1, t = threadIdx.x & 127, lane = t & 31, g = lane >> 2, t4 = lane & 3;
    const int row0 = m0 + w * 64; /* this consumer's 64 rows */
    const int wrow = row0 + (t >> 5) * 16 + g;
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.0f, 0.0f}, alpha[2];
    unsigned pa[32]; /* P as A fragments: BN / 4 used */
#pragma unroll
    for (int i = 0; i < DK / 2; i++) o[i] = 0.0f;
    gk_mbar_wait(q_full, 0); /* also before an empty range: O goes out through Q's tile */
    /* Pipelined within the warpgroup: S of tile j + 1 is issued before O += P V of tile j, and
       its softmax runs while that P V is on the tensor cores. */
    /* Ping-pong: the consumers take turns issuing their MMAs (named barriers 3 and 4), so one's
       softmax runs while the other's MMAs hold the tensor cores. Consumer 1 lets 0 go first and
       skips its last signal, so that every barrier's arrivals match its waits. */
    const int phases = je > jb ? je - jb + 1 : 0;
    if (PINGPONG && phases && w == 1) gk_named_barrier_arrive(3, 256);
    int phase = 0;
#define GK_ATTN_TURN_BEGIN() \
    if (PINGPONG) gk_named_barrier(3 + w, 256)
#define GK_ATTN_TURN_END()                                           \
    do {                                                             \
        phase++;                                                     \
        if (PINGPONG && !(w == 1 && phase == phases)) gk_named_barrier_arrive(4 - w, 256); \
    } while (0)
    if (jb < je) {
        GK_ATTN_TURN_BEGIN();
        gk_attn_wg_qk(s, sq + w * 8192, sk, k_full, 0, q_panel, kv_panel, dt, DK, BN);
        GK_ATTN_TURN_END();
        gk_wgmma_wait_0();
        gk_wgmma_fence_regs(s, BN / 2);
        if (t == 0) gk_mbar_arrive(k_empty);
        const int n0 = jb * BN;
        gk_attn_logits(p, s, BN / 2, gk_attn_tile_edge(p, row0, 64, n0, BN, sk_len, off), wrow, n0 + t4 * 2, sk_len, off);
        gk_attn_softmax(s, BN / 2, row_max, row_sum, alpha); /* O is 0: nothing to rescale */
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) gk_attn_pack_p(s + 8 * kk, dt, pa + 4 * kk);
    }
    for (int j = jb + 1; j < je; j++) {
        const int it = j - jb, st = it % STAGES, ph = (it / STAGES) & 1;
        const int pst = (it - 1) % STAGES, pph = ((it - 1) / STAGES) & 1;
        GK_ATTN_TURN_BEGIN();
        gk_attn_wg_qk(s, sq + w * 8192, sk + st * tile_bytes, k_full + st, ph, q_panel, kv_panel, dt, DK, BN);
        gk_mbar_wait(v_full + pst, pph);
        gk_attn_wg_pv(o, pa, sv + pst * tile_bytes, kv_panel, dt, DK, BN);
        gk_wgmma_commit();
        GK_ATTN_TURN_END();
        gk_wgmma_wait_1(); /* S done, P V of the last tile in flight */
        gk_wgmma_fence_regs(s, BN / 2);
        if (t == 0) gk_mbar_arrive(k_empty + st);
        const int n0 = j * BN;
        gk_attn_logits(p, s, BN / 2, gk_attn_tile_edge(p, row0, 64, n0, BN, sk_len, off), wrow, n0 + t4 * 2, sk_len, off);
        const int moved = __any_sync(0xffffffffu, gk_attn_softmax(s, BN / 2, row_max, row_sum, alpha));
        gk_wgmma_wait_0();
        gk_wgmma_fence_regs(o, DK / 2);
        if (t == 0) gk_mbar_arrive(v_empty + pst);
        if (moved) gk_attn_rescale(o, DK / 2, alpha);
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) gk_attn_pack_p(s + 8 * kk, dt, pa + 4 * kk);
    }
    if (je > jb) {
        const int it = je - jb - 1, st = it % STAGES;
        gk_mbar_wait(v_full + st, (it / STAGES) & 1);
        GK_ATTN_TURN_BEGIN();
        gk_attn_wg_pv(o, pa, sv + st * tile_bytes, kv_panel, dt, DK, BN);
        gk_wgmma_commit();
        GK_ATTN_TURN_END();
        gk_wgmma_wait_0();
        gk_wgmma_fence_regs(o, DK / 2);
        if (t == 0) gk_mbar_arrive(v_empty + st);
    }

#undef GK_ATTN_TURN_BEGIN
#undef GK_ATTN_TURN_END
    float lse_row[2];
    gk_attn_finish(o, DK / 2, row_max, row_sum, lse_row);
    /* O out through this consumer's 64 rows of the Q tile (128-byte swizzle: chunk c of row r at
       c ^ (r % 8)), then 16-byte stores */
    const int rl = (t >> 5) * 16 + g;
#pragma unroll
    for (int i = 0; i < DK / 8; i++)
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int row = rl + 8 * r, c = i;
            char *dst = sq + (c / 8) * q_panel + w * 8192 + row * 128 + (((c & 7) ^ (row & 7)) * 16) + t4 * 4;
            *(unsigned *)dst = gk_pack2_f32(o + 4 * i + 2 * r, dt);
        }
    gk_named_barrier(1 + w, 128);
    char *og = (char *)p->out + 2 * ((int64_t)b * p->o_bs + (int64_t)h * p->o_hs);
    for (int i = t; i < 64 * (DK / 8); i += 128) {
        const int row = i / (DK / 8), c = i % (DK / 8), grow = row0 + row;
        if (grow >= sq_len) continue;
        const char *src = sq + (c / 8) * q_panel + w * 8192 + row * 128 + (((c & 7) ^ (row & 7)) * 16);
        gk_st16(og + 2 * ((int64_t)grow * p->o_rs + c * 8), *(const uint4 *)src);
    }
    if (p->lse && t4 == 0) {
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int row = wrow + 8 * r;
            if (row < sq_len) p->lse[((int64_t)b * p->hq + h) * p->sq + row] = lse_row[r];
        }
    }
#endif
}

typedef void (*gk_attn_wg_kernel)(gk_attn_args, CUtensorMap, CUtensorMap, CUtensorMap);

#define GK_DEFINE_ATTENTION_WGMMA(name, dt, D, BN, STAGES, PINGPONG)                                                       \
    static_assert((D) == 64 || (D) == 128 || (D) == 256, #name ": D is 64, 128 or 256 (wgmma n)");               \
    static_assert((BN) == 64 || (BN) == 128, #name ": BN is 64 or 128 (wgmma n of S)");                        \
    static_assert((STAGES) >= 1, #name ": at least 1 stage");                                                   \
    static_assert(gk_attn_wg_smem_c(D, BN, STAGES) <= 227 * 1024, #name ": over 227 KB of shared memory");      \
    static __global__ void __launch_bounds__(GK_ATTN_WG_THREADS, 1)                                             \
        name(const __grid_constant__ gk_attn_args p, const __grid_constant__ CUtensorMap tq,                      \
             const __grid_constant__ CUtensorMap tk, const __grid_constant__ CUtensorMap tv)                      \
    {                                                                                                            \
        float s[(BN) / 2], o[(D) / 2];                                                                           \
        gk_attn_wg_run(&p, &tq, &tk, &tv, dt, D, BN, STAGES, PINGPONG, s, o);                                    \
    }                                                                                                            \
    static const gk_attention_config name##_config = {#name, D, GK_ATTN_WG_BM, BN, GK_ATTN_WG_THREADS,           \
                                                      gk_attn_wg_smem_c(D, BN, STAGES), 1};

#endif /* GK_ATTENTION_SM90_CUH */

/* ================================================================ implementation */

#if defined(__CUDACC__) && GK_ATTENTION_SM90 && (defined(GK_IMPLEMENTATION) || defined(GK_ATTENTION_IMPLEMENTATION)) && \
    !defined(GK_ATTENTION_SM90_IMPLEMENTED)
#define GK_ATTENTION_SM90_IMPLEMENTED

/* The shipped wgmma configurations, X(name, D, BN, STAGES, PINGPONG); figures in
   gk_bench/RESULTS.md. */
#ifndef GK_ATTENTION_WG_CONFIGS
#define GK_ATTENTION_WG_CONFIGS(X)          \
    X(wg_d64_128x128, 64, 128, 2, 1)        \
    X(wg_d128_128x128, 128, 128, 2, 1)      \
    X(wg_d256_128x64, 256, 64, 2, 0)
#endif
#define GK_ATTN_WG_X_DEFINE(tile, D, BN, STAGES, PP)                                  \
    GK_DEFINE_ATTENTION_WGMMA(gk_attention_bf16_##tile, GK_BF16, D, BN, STAGES, PP) \
    GK_DEFINE_ATTENTION_WGMMA(gk_attention_f16_##tile, GK_F16, D, BN, STAGES, PP)
#define GK_ATTN_WG_X_BF16(tile, D, BN, STAGES, PP) gk_attention_bf16_##tile,
#define GK_ATTN_WG_X_F16(tile, D, BN, STAGES, PP) gk_attention_f16_##tile,
#define GK_ATTN_WG_X_CONFIG(tile, D, BN, STAGES, PP) &gk_attention_bf16_##tile##_config,
GK_ATTENTION_WG_CONFIGS(GK_ATTN_WG_X_DEFINE)

static const gk_attn_wg_kernel gk_attn_wg_kernels[2][32] = {{GK_ATTENTION_WG_CONFIGS(GK_ATTN_WG_X_BF16)},
                                                             {GK_ATTENTION_WG_CONFIGS(GK_ATTN_WG_X_F16)}};
static const gk_attention_config *const gk_attn_wg_configs[] = {GK_ATTENTION_WG_CONFIGS(GK_ATTN_WG_X_CONFIG)};
#define GK_ATTN_NWG ((int)(sizeof gk_attn_wg_configs / sizeof gk_attn_wg_configs[0]))

/* 1 in the image of a build that has sm_90a code (the wgmma kernels are empty otherwise). */
static __device__ int gk_attn_wg_built =
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    1;
#else
    0;
#endif

static int gk_attn_wg_ready(void)
{
    static unsigned known, ready;
    return gk_sm90a_ready(&gk_attn_wg_built, &known, &ready);
}

/* A [B, S, H, D] tensor (strides in elements) as a 4-D TMA map of 64-column boxes of `rows` rows;
   a dimension of extent 1 gets a harmless stride (TMA wants multiples of 16 bytes). */
static cudaError_t gk_attn_wg_map(const char *fn, CUtensorMap *map, const void *x, int dt, int d, int s, int h, int b,
                                  int64_t rs, int64_t hs, int64_t bs, int rows)
{
    const int64_t dims[4] = {d, s, h, b};
    const int64_t strides[3] = {s > 1 ? rs : 8, h > 1 ? hs : 8, b > 1 ? bs : 8};
    const int box[4] = {64, rows, 1, 1};
    return gk_tma_map(fn, map, x, dt, 4, dims, strides, box);
}

static cudaError_t gk_attn_wg_launch(const char *fn, int wg, const gk_attn_args *a, cudaStream_t stream)
{
    const gk_attention_config *cfg = gk_attn_wg_configs[wg];
    if (cfg->head_dim != a->d || a->cu_q)
        return gk__fail(cudaErrorInvalidValue, fn, "configuration %s runs D = %d without cu_seqlens only", cfg->name,
                        cfg->head_dim);
    if (!gk_attn_wg_ready())
        return gk__fail(cudaErrorInvalidValue, fn, "configuration %s needs an sm_90a build on a compute capability 9.0 GPU",
                        cfg->name);
    const void *kern = (const void *)gk_attn_wg_kernels[a->dt == GK_F16][wg];
    static unsigned attr_set[2][32];
    GK_TRY(gk_smem_opt_in(fn, kern, cfg->smem_bytes, &attr_set[a->dt == GK_F16][wg]));
    CUtensorMap tq, tk, tv;
    GK_TRY(gk_attn_wg_map(fn, &tq, a->q, a->dt, a->d, a->sq, a->hq, a->batch, a->q_rs, a->q_hs, a->q_bs, GK_ATTN_WG_BM));
    GK_TRY(gk_attn_wg_map(fn, &tk, a->k, a->dt, a->d, a->sk, a->hkv, a->batch, a->k_rs, a->k_hs, a->k_bs, cfg->bn));
    GK_TRY(gk_attn_wg_map(fn, &tv, a->v, a->dt, a->d, a->sk, a->hkv, a->batch, a->v_rs, a->v_hs, a->v_bs, cfg->bn));
    const dim3 grid((unsigned)gk_ceil_div(a->sq, GK_ATTN_WG_BM), (unsigned)a->hq, (unsigned)a->batch);
    ((gk_attn_wg_kernel)kern)<<<grid, GK_ATTN_WG_THREADS, cfg->smem_bytes, stream>>>(*a, tq, tk, tv);
    return gk_check_launch(fn);
}

#endif /* attention sm90 implementation */
