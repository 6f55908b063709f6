// Host tests of gk_fp8.cuh (no GPU needed): the configurations, the dispatcher's plan, the scale
// counts, and the argument validation of every public entry point. Validation runs before any CUDA
// call, so the calls get fake device addresses (kFake); every refusal names its argument.
// One wgmma tile of gk_gemm.cuh is built (its own tests cover the rest): gk_fp8.cuh needs only
// gk_gemm's host helpers and pipeline.
#define GK_GEMM_WG_CONFIGS(X) X(wg128x256x64_s4, 128, 256, 4, 0, 679)
#define GK_IMPLEMENTATION
#include "gk/gk_fp8.cuh"
#include "gk_tests/gk_test.h"

#include <string>

static char *const kFake = (char *)0x20000000; // 256-byte aligned; buffers 64 MB apart
static const int64_t kMB = 1 << 20;

static bool has(const std::string &s, const std::string &needle) { return s.find(needle) != std::string::npos; }

TEST(Fp8Config, Table)
{
    int block = 0, plain = 0, wg = 0, mma = 0;
    ASSERT_GE(gk_fp8_config_count(), 2);
    for (int c = 0; c < gk_fp8_config_count(); c++) {
        const gk_fp8_config f = gk_fp8_config_info(c);
        ASSERT_NE(f.name, nullptr);
        EXPECT_LE(f.smem_bytes, 227 * 1024) << f.name;
        if (f.wgmma) {
            EXPECT_EQ(f.bk, 128) << f.name;
            EXPECT_EQ(f.threads, 384) << f.name;
            // a persistent kernel's epilogue buffer, a ping-pong one's two turn mbarriers
            EXPECT_EQ(f.smem_bytes, 1024 + f.stages * ((f.bm + f.bn) * 128 + 16) + (f.persistent == 2 ? 16 : 0) +
                                        (f.persistent ? f.bm * (f.bn + 8) * 4 : 0))
                << f.name;
            if (f.persistent == 2) EXPECT_TRUE(f.bm == 128 && f.bn <= 128 && !f.block) << f.name;
            EXPECT_GT(f.rate, 0) << f.name;
            if (f.block) EXPECT_TRUE(f.bm == 128 && f.bn <= 128) << f.name;
        } else {
            EXPECT_EQ(f.block, 0) << f.name << ": block scales are the wgmma kernels' only";
            EXPECT_EQ(f.smem_bytes, f.stages * (f.bm + f.bn) * f.bk) << f.name; // 1 byte a value
        }
        block += f.block;
        plain += !f.block;
        wg += f.wgmma;
        mma += !f.wgmma;
    }
    EXPECT_GE(mma, 1);
    EXPECT_GE(plain, 1);
#if GK_GEMM_SM90
    EXPECT_GE(block, 1);
    EXPECT_GE(wg, 2);
#else
    EXPECT_EQ(wg, 0);
#endif
    EXPECT_EQ(gk_fp8_config_info(-1).name, nullptr);
    EXPECT_EQ(gk_fp8_config_info(gk_fp8_config_count()).name, nullptr);
}

TEST(Fp8Config, PlanPicksTheScalesKind)
{
    const int wg = gk_fp8_wg_ready(); // 0 without a device
    for (int block = 0; block < 2; block++)
        for (int64_t m : {1, 128, 4096})
            for (int64_t n : {256, 28672}) {
                const gk_gemm_plan p = gk_fp8_plan_for(m, n, 8192, block);
                if (block && !wg) { // block scales run on the wgmma kernels only
                    EXPECT_EQ(p.config, -1);
                    continue;
                }
                ASSERT_GE(p.config, 0);
                EXPECT_EQ(gk_fp8_config_info(p.config).block, block);
                EXPECT_EQ(gk_fp8_config_info(p.config).wgmma, wg);
                EXPECT_GE(p.splits, 1);
                EXPECT_LE(p.splits, GK_GEMM_MAX_SPLITS);
                EXPECT_EQ(p.workspace_bytes, p.splits > 1 ? (size_t)gk_round_up(p.splits * m * n * 4, 256) : 0u);
                EXPECT_EQ(gk_fp8_workspace_bytes(m, n, 8192, block), p.workspace_bytes);
            }
    // a product of a few tiles and long K is split; a full GPU of tiles is not
    EXPECT_GT(gk_fp8_plan_for(128, 256, 16384, 0).splits, 1);
    EXPECT_EQ(gk_fp8_plan_for(8192, 8192, 8192, 0).splits, 1);
    EXPECT_EQ(gk_fp8_plan_for(0, 8, 8, 0).workspace_bytes, 0u);
}

TEST(Fp8Config, ScaleCount)
{
    EXPECT_EQ(gk_fp8_scale_count(GK_FP8_TENSOR, 1, 100, 300), 1);
    EXPECT_EQ(gk_fp8_scale_count(GK_FP8_ROW, 1, 100, 300), 100);
    EXPECT_EQ(gk_fp8_scale_count(GK_FP8_BLOCK, 1, 100, 300), 100 * 3);
    EXPECT_EQ(gk_fp8_scale_count(GK_FP8_BLOCK, 128, 300, 256), 3 * 2);
    EXPECT_EQ(gk_fp8_scale_count(GK_FP8_BLOCK, 64, 300, 256), 0);
    EXPECT_EQ(gk_fp8_scale_count(3, 1, 300, 256), 0);
    EXPECT_EQ(gk_fp8_scale_count(GK_FP8_ROW, 1, 0, 256), 0);
}

// A well-formed problem: a [M][K], b [N][K], d [M][N] f32, row scales, 64 MB apart.
struct Args {
    void *d = kFake;
    int d_dtype = GK_F32;
    int64_t ldd = 256;
    const gk_e4m3 *a = (const gk_e4m3 *)(kFake + 64 * kMB);
    int64_t lda = 512;
    const float *sa = (const float *)(kFake + 128 * kMB);
    int ma = GK_FP8_ROW;
    const gk_e4m3 *b = (const gk_e4m3 *)(kFake + 192 * kMB);
    int64_t ldb = 512;
    const float *sb = (const float *)(kFake + 256 * kMB);
    int mb = GK_FP8_ROW;
    const void *c = nullptr;
    int64_t ldc = 256;
    const float *bias = nullptr;
    int64_t m = 100, n = 256, k = 512;
    float beta = 0.0f;
    int act = GK_ACT_NONE;
    int config = -1, splits = 0;
    void *ws = nullptr;
    size_t ws_bytes = 0;
    cudaError_t run() const
    {
        return gk_fp8_gemm_ex(config, splits, d, d_dtype, ldd, a, lda, sa, ma, b, ldb, sb, mb, c, ldc, bias, m, n, k, 1.0f,
                              beta, act, ws, ws_bytes, 0);
    }
};

TEST(Fp8Validation, GemmRefused)
{
    struct Bad {
        const char *needle;
        void (*edit)(Args *);
    };
    const Bad bads[] = {
        {"d_dtype", [](Args *a) { a->d_dtype = GK_E4M3; }},
        {"act", [](Args *a) { a->act = 7; }},
        {"config", [](Args *a) { a->config = 99; }},
        {"splits", [](Args *a) { a->splits = -1; }},
        {"'m'", [](Args *a) { a->m = -1; }},
        {"32-bit", [](Args *a) { a->k = (int64_t)1 << 31; }},
        {"block scales", [](Args *a) { a->ma = GK_FP8_BLOCK; }},
        {"scale_a mode", [](Args *a) { a->ma = 5; }},
        {"'scale_b' is a null pointer", [](Args *a) { a->sb = nullptr; }},
        {"'a' is a null pointer", [](Args *a) { a->a = nullptr; }},
        {"a is not 16-byte aligned", [](Args *a) { a->a += 8; }},
        {"lda = 520 is not a multiple of 16", [](Args *a) { a->lda = 520; }},
        {"ldb = 500 is smaller than k", [](Args *a) { a->ldb = 500; }},
        {"'d' is a null pointer", [](Args *a) { a->d = nullptr; }},
        {"ldd", [](Args *a) { a->ldd = 255; }},
        {"'c' is a null pointer", [](Args *a) { a->beta = 1.0f; }},
        {"overlap", [](Args *a) { a->d = (void *)a->a; }},
        {"overlap", [](Args *a) { a->d = (void *)a->sa; }},
        {"workspace is not 256-byte aligned", [](Args *a) { a->ws = kFake + 320 * kMB + 8; a->ws_bytes = 1024; }},
    };
    for (const Bad &bad : bads) {
        Args a;
        bad.edit(&a);
        EXPECT_EQ(a.run(), cudaErrorInvalidValue) << bad.needle;
        EXPECT_TRUE(has(gk_failure_reason(), bad.needle)) << bad.needle << ": " << gk_failure_reason();
    }
    // a configuration of the other scale kind, before any device query
    for (int c = 0; c < gk_fp8_config_count(); c++) {
        const gk_fp8_config f = gk_fp8_config_info(c);
        Args a;
        a.config = c;
        if (!f.block) a.ma = a.mb = GK_FP8_BLOCK;
        EXPECT_EQ(a.run(), cudaErrorInvalidValue) << f.name;
        EXPECT_TRUE(has(gk_failure_reason(), f.block ? "takes block scales" : "takes tensor or row scales"))
            << gk_failure_reason();
    }
    // tensor scales may be NULL (1); m == 0 touches nothing
    Args e;
    e.m = 0;
    e.d = nullptr;
    EXPECT_EQ(e.run(), cudaSuccess);
    EXPECT_STREQ(gk_failure_reason(), "");
}

TEST(Fp8Validation, QuantizeRefused)
{
    gk_e4m3 *out = (gk_e4m3 *)kFake;
    float *sc = (float *)(kFake + 64 * kMB);
    const void *x = kFake + 128 * kMB;
    struct Bad {
        const char *needle;
        cudaError_t e;
    };
    const Bad bads[] = {
        {"scale_mode 4", gk_fp8_quantize(out, 64, sc, 4, 1, x, GK_BF16, 64, 0, 8, 64, 0)},
        {"block_rows = 64", gk_fp8_quantize(out, 64, sc, GK_FP8_BLOCK, 64, x, GK_BF16, 64, 0, 8, 64, 0)},
        {"x_dtype", gk_fp8_quantize(out, 64, sc, GK_FP8_ROW, 1, x, GK_E4M3, 64, 0, 8, 64, 0)},
        {"trans = 2", gk_fp8_quantize(out, 64, sc, GK_FP8_ROW, 1, x, GK_BF16, 64, 2, 8, 64, 0)},
        {"'rows'", gk_fp8_quantize(out, 64, sc, GK_FP8_ROW, 1, x, GK_BF16, 64, 0, -8, 64, 0)},
        {"'out' is a null pointer", gk_fp8_quantize(nullptr, 64, sc, GK_FP8_ROW, 1, x, GK_BF16, 64, 0, 8, 64, 0)},
        {"'scales' is a null pointer", gk_fp8_quantize(out, 64, nullptr, GK_FP8_ROW, 1, x, GK_BF16, 64, 0, 8, 64, 0)},
        {"ldo = 63", gk_fp8_quantize(out, 63, sc, GK_FP8_ROW, 1, x, GK_BF16, 64, 0, 8, 64, 0)},
        {"ldx = 7", gk_fp8_quantize(out, 64, sc, GK_FP8_ROW, 1, x, GK_BF16, 7, 1, 8, 64, 0)},
        {"overlap", gk_fp8_quantize(out, 64, (float *)out, GK_FP8_ROW, 1, x, GK_BF16, 64, 0, 8, 64, 0)},
    };
    for (const Bad &b : bads) {
        EXPECT_EQ(b.e, cudaErrorInvalidValue) << b.needle;
    }
    // the reasons, one call at a time (each call resets the last reason)
    EXPECT_EQ(gk_fp8_quantize(out, 64, sc, GK_FP8_BLOCK, 64, x, GK_BF16, 64, 0, 8, 64, 0), cudaErrorInvalidValue);
    EXPECT_TRUE(has(gk_failure_reason(), "block_rows = 64 is not 1 or 128")) << gk_failure_reason();
    EXPECT_EQ(gk_fp8_quantize(out, 64, sc, GK_FP8_ROW, 1, x, GK_BF16, 7, 1, 8, 64, 0), cudaErrorInvalidValue);
    EXPECT_TRUE(has(gk_failure_reason(), "ldx = 7 is smaller than x's row")) << gk_failure_reason();
    EXPECT_EQ(gk_fp8_quantize(out, 64, sc, GK_FP8_ROW, 1, x, GK_BF16, 64, 0, 0, 64, 0), cudaSuccess);
}
