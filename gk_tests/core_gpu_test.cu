// GPU tests of gk_core.cuh's device building blocks: warp and block reductions against a CPU
// reference in double, their determinism, and the 16-byte loads and stores. Skipped without a GPU.
#define GK_CORE_IMPLEMENTATION
#include "gk/gk_core.cuh"
#include "gk_tests/gk_rne.h"
#include "gk_tests/gk_test.h"

#include <cmath>
#include <string>
#include <vector>

static __global__ void warp_reduce_kernel(const float *in, float *sums, float *maxes)
{
    float v = in[blockIdx.x * 32 + threadIdx.x];
    float s = gk_warp_sum(v), m = gk_warp_max(v);
    // every lane holds the result: each writes its own copy, so a lane that differs is caught
    sums[blockIdx.x * 32 + threadIdx.x] = s;
    maxes[blockIdx.x * 32 + threadIdx.x] = m;
}

static __global__ void block_reduce_kernel(const float *in, int per_block, float *sums, float *maxes)
{
    __shared__ float scratch[32];
    float s = 0.0f, m = -INFINITY;
    for (int i = threadIdx.x; i < per_block; i += blockDim.x) {
        float v = in[(int64_t)blockIdx.x * per_block + i];
        s += v;
        m = fmaxf(m, v);
    }
    s = gk_block_sum(s, scratch);
    m = gk_block_max(m, scratch);
    if (threadIdx.x == blockDim.x - 1) { // the last thread: proves the result reaches every thread
        sums[blockIdx.x] = s;
        maxes[blockIdx.x] = m;
    }
}

static __global__ void copy16_kernel(const void *in, void *out, int chunks, int mode)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= chunks) return;
    const char *src = (const char *)in + 16 * (int64_t)i;
    char *dst = (char *)out + 16 * (int64_t)i;
    uint4 v = mode == 0 ? gk_ld16_nc(src) : gk_ld16_cs(src);
    if (mode == 0) gk_st16(dst, v);
    else gk_st16_cs(dst, v);
}

// gk_pack_f32 (n of 8 values, or n = 0: gk_pack2_f32 on each pair) and gk_unpack_f32 (n = 0:
// gk_unpack2_f32 on each word), called with literal dtypes and counts as gk's kernels call them.
// Each thread packs 8 floats into one uint4, or unpacks one uint4 into 8 floats (slots the call
// does not write keep the sentinel already there).
#define CORE_PACK_CASE(DT, N)                                                                           \
    case DT * 16 + N: u = N ? gk_pack_f32(s, DT, N) : make_uint4(gk_pack2_f32(s, DT), gk_pack2_f32(s + 2, DT), \
                                                            gk_pack2_f32(s + 4, DT), gk_pack2_f32(s + 6, DT)); break;
static __global__ void pack_kernel(const float *in, int64_t groups, int dt, int n, uint4 *out)
{
    const int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= groups) return;
    float s[8];
#pragma unroll
    for (int k = 0; k < 8; k++) s[k] = in[g * 8 + k];
    uint4 u = make_uint4(0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu);
    switch (dt * 16 + n) {
        CORE_PACK_CASE(GK_BF16, 0) CORE_PACK_CASE(GK_BF16, 2) CORE_PACK_CASE(GK_BF16, 4) CORE_PACK_CASE(GK_BF16, 8)
        CORE_PACK_CASE(GK_F16, 0) CORE_PACK_CASE(GK_F16, 2) CORE_PACK_CASE(GK_F16, 4) CORE_PACK_CASE(GK_F16, 8)
    case GK_F32 * 16 + 1: u = gk_pack_f32(s, GK_F32, 1); break;
    case GK_F32 * 16 + 2: u = gk_pack_f32(s, GK_F32, 2); break;
    case GK_F32 * 16 + 4: u = gk_pack_f32(s, GK_F32, 4); break;
    default: break;
    }
    out[g] = u;
}

#define CORE_UNPACK_CASE(DT, N)                                                                         \
    case DT * 16 + N:                                                                                   \
        if (N) gk_unpack_f32(u, DT, N, d);                                                              \
        else gk_unpack2_f32(u.x, DT, d), gk_unpack2_f32(u.y, DT, d + 2), gk_unpack2_f32(u.z, DT, d + 4),    \
            gk_unpack2_f32(u.w, DT, d + 6);                                                             \
        break;
static __global__ void unpack_kernel(const uint4 *in, int64_t groups, int dt, int n, float *out)
{
    const int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= groups) return;
    const uint4 u = in[g];
    float d[8];
#pragma unroll
    for (int k = 0; k < 8; k++) d[k] = out[g * 8 + k]; // the sentinel
    switch (dt * 16 + n) {
        CORE_UNPACK_CASE(GK_BF16, 0) CORE_UNPACK_CASE(GK_BF16, 2) CORE_UNPACK_CASE(GK_BF16, 4)
        CORE_UNPACK_CASE(GK_BF16, 8) CORE_UNPACK_CASE(GK_F16, 0) CORE_UNPACK_CASE(GK_F16, 2)
        CORE_UNPACK_CASE(GK_F16, 4) CORE_UNPACK_CASE(GK_F16, 8)
    case GK_F32 * 16 + 1: gk_unpack_f32(u, GK_F32, 1, d); break;
    case GK_F32 * 16 + 2: gk_unpack_f32(u, GK_F32, 2, d); break;
    case GK_F32 * 16 + 4: gk_unpack_f32(u, GK_F32, 4, d); break;
    default: break;
    }
#pragma unroll
    for (int k = 0; k < 8; k++) out[g * 8 + k] = d[k];
}

// Packing fp32 to bf16 and f16 (gk_pack_f32, gk_pack2_f32) is bit-exact against the independent
// round-to-nearest-even reference (gk_rne.h) over the probe set (ties at every rounding position,
// subnormals, overflow, +-0, +-inf, NaNs) and 2^20 random bit patterns; the words past n values
// are 0. For f32 the words are the floats' bits, NaN payloads included.
TEST(CoreGpu, PackBitExact)
{
    GK_REQUIRE_GPU();
    std::vector<uint32_t> bits = gk_rne_probe_f32(gk_test_seed(), (size_t)1 << 20);
    while (bits.size() % 8) bits.push_back(0x3f800000u);
    const int64_t groups = (int64_t)bits.size() / 8;
    DeviceTensor in(GK_F32, bits.size()), out(GK_F32, groups * 4);
    ASSERT_TRUE(in.ok() && out.ok());
    GK_CUDA_OK(cudaMemcpy(in.ptr(), bits.data(), bits.size() * 4, cudaMemcpyHostToDevice));
    const struct {
        int dt, n;
    } cases[] = {{GK_BF16, 0}, {GK_BF16, 2}, {GK_BF16, 4}, {GK_BF16, 8}, {GK_F16, 0}, {GK_F16, 2},
                 {GK_F16, 4},  {GK_F16, 8},  {GK_F32, 1},  {GK_F32, 2},  {GK_F32, 4}};
    for (const auto &c : cases) {
        SCOPED_TRACE(std::string(gk_dtype_name(c.dt)) + " n=" + std::to_string(c.n));
        GK_CUDA_OK(out.poison());
        pack_kernel<<<(unsigned)((groups + 255) / 256), 256>>>((const float *)in.ptr(), groups, c.dt, c.n,
                                                                 (uint4 *)out.ptr());
        GK_CUDA_OK(cudaGetLastError());
        GK_CUDA_OK(cudaDeviceSynchronize());
        std::vector<uint32_t> got(groups * 4);
        GK_CUDA_OK(cudaMemcpy(got.data(), out.ptr(), got.size() * 4, cudaMemcpyDeviceToHost));
        int64_t bad = 0;
        for (int64_t g = 0; g < groups; g++)
            for (int w = 0; w < 4; w++) {
                const uint32_t word = got[g * 4 + w];
                bool ok;
                uint32_t want;
                if (c.dt == GK_F32) { // one float a word, n of them
                    want = w < c.n ? bits[g * 8 + w] : 0u;
                    ok = word == want;
                } else { // two values a word, n of them (n = 0: all four words, by gk_pack2_f32)
                    const GkRneFormat f = c.dt == GK_BF16 ? kGkRneBf16 : kGkRneF16;
                    const bool used = c.n == 0 || 2 * w < c.n;
                    const uint32_t lo = used ? gk_rne_from_f32(bits[g * 8 + 2 * w], f) : 0u;
                    const uint32_t hi = used ? gk_rne_from_f32(bits[g * 8 + 2 * w + 1], f) : 0u;
                    want = lo | hi << 16;
                    ok = gk_rne_same(word & 0xffffu, lo, f) && gk_rne_same(word >> 16, hi, f);
                }
                if (!ok && bad++ < 8)
                    printf("  group %lld word %d: inputs 0x%08x 0x%08x -> got 0x%08x, want 0x%08x\n", (long long)g, w,
                           bits[g * 8 + 2 * w % 8], bits[g * 8 + (2 * w + 1) % 8], word, want);
            }
        EXPECT_EQ(bad, 0) << "of " << groups * 4 << " words";
    }
}

// Unpacking (gk_unpack_f32, gk_unpack2_f32) widens every bf16 and f16 code, in the low and the high
// half of a word, to exactly its fp32 value (gk_rne.h); NaN gives NaN. Slots past n values are not
// written. For f32 the floats are the words' bits.
TEST(CoreGpu, UnpackBitExact)
{
    GK_REQUIRE_GPU();
    const struct {
        int dt, n;
    } cases[] = {{GK_BF16, 0}, {GK_BF16, 2}, {GK_BF16, 4}, {GK_BF16, 8}, {GK_F16, 0}, {GK_F16, 2},
                 {GK_F16, 4},  {GK_F16, 8},  {GK_F32, 1},  {GK_F32, 2},  {GK_F32, 4}};
    const uint32_t sentinel = 0x7fbadbadu;
    for (const auto &c : cases) {
        SCOPED_TRACE(std::string(gk_dtype_name(c.dt)) + " n=" + std::to_string(c.n));
        // the input words: every 16-bit code at both halves (the sequence twice, shifted by one
        // code), or for f32 the probe set
        std::vector<uint32_t> words;
        if (c.dt == GK_F32) {
            words = gk_rne_probe_f32(gk_test_seed(), (size_t)1 << 18);
        } else {
            std::vector<uint32_t> codes;
            for (int rep = 0; rep < 2; rep++) {
                if (rep) codes.push_back(0x3c00u);
                for (uint32_t k = 0; k < 65536; k++) codes.push_back(k);
            }
            while (codes.size() % 2) codes.push_back(0u);
            for (size_t i = 0; i < codes.size(); i += 2) words.push_back(codes[i] | codes[i + 1] << 16);
        }
        while (words.size() % 4) words.push_back(0u);
        const int64_t groups = (int64_t)words.size() / 4;
        DeviceTensor in(GK_F32, words.size()), out(GK_F32, groups * 8);
        ASSERT_TRUE(in.ok() && out.ok());
        GK_CUDA_OK(cudaMemcpy(in.ptr(), words.data(), words.size() * 4, cudaMemcpyHostToDevice));
        std::vector<uint32_t> fill(groups * 8, sentinel);
        GK_CUDA_OK(cudaMemcpy(out.ptr(), fill.data(), fill.size() * 4, cudaMemcpyHostToDevice));
        unpack_kernel<<<(unsigned)((groups + 255) / 256), 256>>>((const uint4 *)in.ptr(), groups, c.dt, c.n,
                                                                   (float *)out.ptr());
        GK_CUDA_OK(cudaGetLastError());
        GK_CUDA_OK(cudaDeviceSynchronize());
        std::vector<uint32_t> got(groups * 8);
        GK_CUDA_OK(cudaMemcpy(got.data(), out.ptr(), got.size() * 4, cudaMemcpyDeviceToHost));
        const int per = c.n ? c.n : 8; // values written per group
        int64_t bad = 0;
        for (int64_t g = 0; g < groups; g++)
            for (int k = 0; k < 8; k++) {
                const uint32_t v = got[g * 8 + k];
                uint32_t code = 0, want;
                bool ok;
                if (k >= per) {
                    want = sentinel;
                    ok = v == sentinel;
                } else if (c.dt == GK_F32) {
                    want = code = words[g * 4 + k];
                    ok = v == want;
                } else {
                    const GkRneFormat f = c.dt == GK_BF16 ? kGkRneBf16 : kGkRneF16;
                    code = (words[g * 4 + k / 2] >> (16 * (k % 2))) & 0xffffu;
                    want = gk_rne_to_f32(code, f);
                    ok = gk_rne_same_f32(v, want) && v != sentinel;
                }
                if (!ok && bad++ < 8)
                    printf("  group %lld slot %d: code 0x%x -> got 0x%08x, want 0x%08x\n", (long long)g, k, code, v, want);
            }
        EXPECT_EQ(bad, 0) << "of " << groups * 8 << " values";
    }
}

// gk_core's scalar conversions in device code (where sm_89+ takes cvt ... e4m3x2 / e5m2x2 and the
// host a software path): fp32 to each narrow format, and every code of each back to fp32.
static __global__ void narrow_kernel(const float *in, int64_t n, gk_bf16 *b, gk_f16 *h, gk_e4m3 *e4, gk_e5m2 *e5)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float v = in[i];
        b[i] = gk_f32_to_bf16(v);
        h[i] = gk_f32_to_f16(v);
        e4[i] = gk_f32_to_e4m3(v);
        e5[i] = gk_f32_to_e5m2(v);
    }
}

static __global__ void widen_kernel(float *b, float *h, float *e4, float *e5)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x; // 0 .. 65535
    const unsigned short u = (unsigned short)k;
    b[k] = gk_bf16_to_f32(__ushort_as_bfloat16(u));
    h[k] = gk_f16_to_f32(__ushort_as_half(u));
    if (k < 256) {
        e4[k] = gk_e4m3_to_f32((gk_e4m3)k);
        e5[k] = gk_e5m2_to_f32((gk_e5m2)k);
    }
}

TEST(CoreGpu, ScalarConversionsBitExact)
{
    GK_REQUIRE_GPU();
    std::vector<uint32_t> bits = gk_rne_probe_f32(gk_test_seed(), (size_t)1 << 20);
    for (GkRneFormat f : {kGkRneBf16, kGkRneF16, kGkRneE4m3, kGkRneE5m2}) {
        const std::vector<uint32_t> grid = gk_rne_probe_grid(f);
        bits.insert(bits.end(), grid.begin(), grid.end());
    }
    const int64_t n = (int64_t)bits.size();
    DeviceTensor in(GK_F32, n), ob(GK_BF16, n), oh(GK_F16, n), o4(GK_E4M3, n), o5(GK_E5M2, n);
    ASSERT_TRUE(in.ok() && ob.ok() && oh.ok() && o4.ok() && o5.ok());
    GK_CUDA_OK(cudaMemcpy(in.ptr(), bits.data(), n * 4, cudaMemcpyHostToDevice));
    narrow_kernel<<<1024, 256>>>((const float *)in.ptr(), n, (gk_bf16 *)ob.ptr(), (gk_f16 *)oh.ptr(),
                                 (gk_e4m3 *)o4.ptr(), (gk_e5m2 *)o5.ptr());
    GK_CUDA_OK(cudaGetLastError());
    GK_CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint16_t> gb(n), gh(n);
    std::vector<uint8_t> g4(n), g5(n);
    GK_CUDA_OK(cudaMemcpy(gb.data(), ob.ptr(), n * 2, cudaMemcpyDeviceToHost));
    GK_CUDA_OK(cudaMemcpy(gh.data(), oh.ptr(), n * 2, cudaMemcpyDeviceToHost));
    GK_CUDA_OK(cudaMemcpy(g4.data(), o4.ptr(), n, cudaMemcpyDeviceToHost));
    GK_CUDA_OK(cudaMemcpy(g5.data(), o5.ptr(), n, cudaMemcpyDeviceToHost));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const uint32_t got[4] = {gb[i], gh[i], g4[i], g5[i]};
        const GkRneFormat fs[4] = {kGkRneBf16, kGkRneF16, kGkRneE4m3, kGkRneE5m2};
        const char *names[4] = {"bf16", "f16", "e4m3", "e5m2"};
        for (int k = 0; k < 4; k++) {
            const uint32_t want = gk_rne_from_f32(bits[i], fs[k]);
            if (!gk_rne_same(got[k], want, fs[k]) && bad++ < 8)
                printf("  f32 0x%08x -> %s 0x%x, want 0x%x\n", bits[i], names[k], got[k], want);
        }
    }
    EXPECT_EQ(bad, 0) << "fp32 to bf16, f16, e4m3, e5m2 over " << n << " inputs";

    DeviceTensor wb(GK_F32, 65536), wh(GK_F32, 65536), w4(GK_F32, 256), w5(GK_F32, 256);
    ASSERT_TRUE(wb.ok() && wh.ok() && w4.ok() && w5.ok());
    widen_kernel<<<256, 256>>>((float *)wb.ptr(), (float *)wh.ptr(), (float *)w4.ptr(), (float *)w5.ptr());
    GK_CUDA_OK(cudaGetLastError());
    GK_CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint32_t> vb(65536), vh(65536), v4(256), v5(256);
    GK_CUDA_OK(cudaMemcpy(vb.data(), wb.ptr(), 65536 * 4, cudaMemcpyDeviceToHost));
    GK_CUDA_OK(cudaMemcpy(vh.data(), wh.ptr(), 65536 * 4, cudaMemcpyDeviceToHost));
    GK_CUDA_OK(cudaMemcpy(v4.data(), w4.ptr(), 256 * 4, cudaMemcpyDeviceToHost));
    GK_CUDA_OK(cudaMemcpy(v5.data(), w5.ptr(), 256 * 4, cudaMemcpyDeviceToHost));
    bad = 0;
    for (uint32_t k = 0; k < 65536; k++) {
        if (!gk_rne_same_f32(vb[k], gk_rne_to_f32(k, kGkRneBf16)) && bad++ < 8) printf("  bf16 0x%04x -> 0x%08x\n", k, vb[k]);
        if (!gk_rne_same_f32(vh[k], gk_rne_to_f32(k, kGkRneF16)) && bad++ < 8) printf("  f16 0x%04x -> 0x%08x\n", k, vh[k]);
        if (k >= 256) continue;
        if (!gk_rne_same_f32(v4[k], gk_rne_to_f32(k, kGkRneE4m3)) && bad++ < 8) printf("  e4m3 0x%02x -> 0x%08x\n", k, v4[k]);
        if (!gk_rne_same_f32(v5[k], gk_rne_to_f32(k, kGkRneE5m2)) && bad++ < 8) printf("  e5m2 0x%02x -> 0x%08x\n", k, v5[k]);
    }
    EXPECT_EQ(bad, 0) << "codes widened to fp32";
}

TEST(CoreGpu, WarpReductionsMatchReference)
{
    GK_REQUIRE_GPU();
    const int warps = 257;
    GkRng rng(11);
    HostTensor h(GK_F32, warps * 32);
    h.fill_uniform(rng, -100, 100);
    DeviceTensor in(GK_F32, h.n), sums(GK_F32, h.n), maxes(GK_F32, h.n);
    GK_CUDA_OK(in.upload(h));
    GK_CUDA_OK(sums.poison());
    GK_CUDA_OK(maxes.poison());
    warp_reduce_kernel<<<warps, 32>>>((const float *)in.ptr(), (float *)sums.ptr(), (float *)maxes.ptr());
    GK_CUDA_OK(cudaGetLastError());
    GK_CUDA_OK(cudaDeviceSynchronize());
    HostTensor gs(GK_F32, h.n), gm(GK_F32, h.n);
    GK_CUDA_OK(sums.download(&gs));
    GK_CUDA_OK(maxes.download(&gm));
    for (int w = 0; w < warps; w++) {
        double s = 0, a = 0, m = -INFINITY;
        for (int l = 0; l < 32; l++) {
            double v = h.get(w * 32 + l);
            s += v;
            a += std::fabs(v);
            m = std::max(m, v);
        }
        for (int l = 0; l < 32; l++) {
            ASSERT_NEAR(gs.get(w * 32 + l), s, 1e-6 * a) << "warp " << w << " lane " << l;
            ASSERT_EQ(gm.get(w * 32 + l), m) << "warp " << w << " lane " << l;
        }
    }
}

TEST(CoreGpu, BlockReductionsMatchReferenceAndRepeatBitwise)
{
    GK_REQUIRE_GPU();
    const int threads_list[] = {32, 64, 96, 256, 1024};
    const int blocks = 131, per_block = 5003;
    GkRng rng(12);
    HostTensor h(GK_F32, (size_t)blocks * per_block);
    h.fill_uniform(rng, -10, 10);
    DeviceTensor in(GK_F32, h.n), sums(GK_F32, blocks), maxes(GK_F32, blocks);
    GK_CUDA_OK(in.upload(h));
    for (int threads : threads_list) {
        SCOPED_TRACE("threads " + std::to_string(threads));
        HostTensor first(GK_F32, blocks);
        for (int rep = 0; rep < 2; rep++) {
            GK_CUDA_OK(sums.poison());
            GK_CUDA_OK(maxes.poison());
            block_reduce_kernel<<<blocks, threads>>>((const float *)in.ptr(), per_block, (float *)sums.ptr(),
                                                     (float *)maxes.ptr());
            GK_CUDA_OK(cudaGetLastError());
            GK_CUDA_OK(cudaDeviceSynchronize());
            HostTensor gs(GK_F32, blocks), gm(GK_F32, blocks);
            GK_CUDA_OK(sums.download(&gs));
            GK_CUDA_OK(maxes.download(&gm));
            for (int b = 0; b < blocks; b++) {
                double s = 0, a = 0, m = -INFINITY;
                for (int i = 0; i < per_block; i++) {
                    double v = h.get((size_t)b * per_block + i);
                    s += v;
                    a += std::fabs(v);
                    m = std::max(m, v);
                }
                ASSERT_NEAR(gs.get(b), s, 1e-6 * a) << "block " << b;
                ASSERT_EQ(gm.get(b), m) << "block " << b;
            }
            if (rep == 0) first = gs;
            else EXPECT_EQ(memcmp(first.bytes.data(), gs.bytes.data(), first.bytes.size()), 0) << "not deterministic";
        }
    }
}

TEST(CoreGpu, Load16Store16CopyExactly)
{
    GK_REQUIRE_GPU();
    const int chunks = 100003;
    GkRng rng(13);
    HostTensor h(GK_F32, (size_t)chunks * 4);
    h.fill_uniform(rng, -1, 1);
    for (int mode = 0; mode < 2; mode++) {
        DeviceTensor in(GK_F32, h.n), out(GK_F32, h.n);
        GK_CUDA_OK(in.upload(h));
        GK_CUDA_OK(out.poison());
        copy16_kernel<<<(chunks + 255) / 256, 256>>>(in.ptr(), out.ptr(), chunks, mode);
        GK_CUDA_OK(cudaGetLastError());
        GK_CUDA_OK(cudaDeviceSynchronize());
        HostTensor got(GK_F32, h.n);
        GK_CUDA_OK(out.download(&got));
        EXPECT_EQ(memcmp(got.bytes.data(), h.bytes.data(), h.bytes.size()), 0) << "mode " << mode;
        EXPECT_EQ(out.guard_damage(), 0u);
    }
}

TEST(CoreGpu, SmCountAndGridSize)
{
    GK_REQUIRE_GPU();
    int sms = 0, dev = 0;
    GK_CUDA_OK(gk_sm_count(&sms));
    cudaDeviceProp p;
    GK_CUDA_OK(cudaGetDevice(&dev));
    GK_CUDA_OK(cudaGetDeviceProperties(&p, dev));
    EXPECT_EQ(sms, p.multiProcessorCount);
    int grid = 0;
    GK_CUDA_OK(gk_grid_size(10, 256, 8, &grid));
    EXPECT_EQ(grid, 1);
    GK_CUDA_OK(gk_grid_size((int64_t)1 << 40, 256, 8, &grid));
    EXPECT_EQ(grid, sms * 8);
}
