// GPU tests of gk_mma.cuh's wrappers: one warp copies a 16 x 16 A and a 16 x 8 B into swizzled
// shared memory with cp.async, loads the fragments with ldmatrix (B both n-major and, through
// .trans, k-major) and runs mma.sync m16n8k16; D is checked against a CPU reference in double.
// The same tiles read as 16 x 32 and 32 x 8 e4m3 (the same bytes, the same ldmatrix calls) run
// mma.sync m16n8k32 e4m3 (compute capability 8.9 and later). Also: cp.async's zero fill. Skipped
// without a GPU.
#define GK_CORE_IMPLEMENTATION
#include "gk/gk_mma.cuh"
#include "gk_tests/gk_test.h"

// A: 16 x 16 row-major; bt: B^T, 8 x 16 row-major (n-major); bk: B, 16 x 8 row-major (k-major);
// c: 16 x 8 accumulator in; d, d_trans: 16 x 8 out (B through .x2 and through .x2.trans).
// mode 0: bf16, 1: f16, 2: e4m3 (A 16 x 32, bt 8 x 32 bytes; d_trans not written).
static __global__ void mma_tile_kernel(const void *A, const void *bt, const void *bk, const float *c, float *d,
                                       float *d_trans, int mode)
{
    __shared__ __align__(128) unsigned char sa[16 * 32], sb[8 * 32], sbk[16 * 16];
    const int lane = threadIdx.x;
    // 32-byte rows (16 values): chunk (row l / 2, l % 2), swizzled
    gk_cp_async_16(sa + gk_swizzle_offset(lane / 2, lane % 2, 32), (const char *)A + 16 * lane, 16);
    if (lane < 16) {
        gk_cp_async_16(sb + gk_swizzle_offset(lane / 2, lane % 2, 32), (const char *)bt + 16 * lane, 16);
        gk_cp_async_16(sbk + 16 * lane, (const char *)bk + 16 * lane, 16); // 16-byte rows, plain
    }
    gk_cp_async_commit();
    gk_cp_async_wait_0();
    __syncthreads();

    unsigned a[4], b[2], b2[2];
    const int j = lane / 8, r8 = lane % 8;
    gk_ldmatrix_x4(a, sa + gk_swizzle_offset(r8 + 8 * (j & 1), j >> 1, 32));
    const int jb = (lane / 8) & 1;
    gk_ldmatrix_x2(b, sb + gk_swizzle_offset(r8, jb, 32));
    gk_ldmatrix_x2_trans(b2, sbk + 16 * (r8 + 8 * jb));
    float acc[4], out[4], out2[4];
    for (int i = 0; i < 4; i++) {
        int r, col;
        gk_mma_c_pos(lane, i, &r, &col);
        acc[i] = c[r * 8 + col];
    }
    if (mode == 2) {
        gk_mma_m16n8k32_e4m3(out, a, b, acc);
        for (int i = 0; i < 4; i++) out2[i] = out[i];
    } else if (mode == 1) {
        gk_mma_m16n8k16_f16(out, a, b, acc);
        gk_mma_m16n8k16_f16(out2, a, b2, acc);
    } else {
        gk_mma_m16n8k16_bf16(out, a, b, acc);
        gk_mma_m16n8k16_bf16(out2, a, b2, acc);
    }
    for (int i = 0; i < 4; i++) {
        int r, col;
        gk_mma_c_pos(lane, i, &r, &col);
        d[r * 8 + col] = out[i];
        d_trans[r * 8 + col] = out2[i];
    }
}

static __global__ void cp_async_zero_fill_kernel(const int4 *src, int4 *dst, int bytes)
{
    __shared__ __align__(16) int4 s[32];
    gk_cp_async_16(&s[threadIdx.x], src + threadIdx.x, bytes);
    gk_cp_async_commit();
    gk_cp_async_wait_all();
    __syncthreads();
    dst[threadIdx.x] = s[threadIdx.x];
}

class MmaGpu : public ::testing::TestWithParam<int> {};

TEST_P(MmaGpu, TileMatchesReference)
{
    GK_REQUIRE_GPU();
    const int dt = GetParam();
    GkRng rng(dt + 1);
    HostTensor ha(dt, 256), hbt(dt, 128), hbk(dt, 128), hc(GK_F32, 128);
    ha.fill_uniform(rng, -2, 2);
    hbt.fill_uniform(rng, -2, 2);
    for (int k = 0; k < 16; k++)
        for (int n = 0; n < 8; n++) hbk.set(k * 8 + n, (float)hbt.get(n * 16 + k)); // the same B, k-major
    hc.fill_uniform(rng, -1, 1);
    DeviceTensor da(dt, 256), dbt(dt, 128), dbk(dt, 128), dc(GK_F32, 128), dd(GK_F32, 128), dd2(GK_F32, 128);
    GK_CUDA_OK(da.upload(ha));
    GK_CUDA_OK(dbt.upload(hbt));
    GK_CUDA_OK(dbk.upload(hbk));
    GK_CUDA_OK(dc.upload(hc));
    GK_CUDA_OK(dd.poison());
    GK_CUDA_OK(dd2.poison());
    mma_tile_kernel<<<1, 32>>>(da.ptr(), dbt.ptr(), dbk.ptr(), (const float *)dc.ptr(), (float *)dd.ptr(),
                               (float *)dd2.ptr(), dt == GK_F16 ? 1 : 0);
    GK_CUDA_OK(cudaGetLastError());
    GK_CUDA_OK(cudaDeviceSynchronize());
    HostTensor gd(GK_F32, 128), gd2(GK_F32, 128);
    GK_CUDA_OK(dd.download(&gd));
    GK_CUDA_OK(dd2.download(&gd2));
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 8; n++) {
            double ref = hc.get(m * 8 + n), mag = std::fabs(ref);
            for (int k = 0; k < 16; k++) {
                ref += ha.get(m * 16 + k) * hbt.get(n * 16 + k);
                mag += std::fabs(ha.get(m * 16 + k) * hbt.get(n * 16 + k));
            }
            // exact products, fp32 accumulation: a few ulp of the magnitude
            EXPECT_NEAR(gd.get(m * 8 + n), ref, 1e-5 * mag) << "D[" << m << "][" << n << "]";
            EXPECT_NEAR(gd2.get(m * 8 + n), ref, 1e-5 * mag) << "D[" << m << "][" << n << "] via .trans";
        }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, MmaGpu, ::testing::Values((int)GK_BF16, (int)GK_F16),
                         [](const ::testing::TestParamInfo<int> &i) { return std::string(gk_dtype_name(i.param)); });

// An e4m3 code's value, from the OCP format (bias 7, 3 mantissa bits, subnormals below 2^-6).
static double e4m3_value(unsigned v)
{
    const int e = (v >> 3) & 15, m = v & 7;
    const double x = e ? std::ldexp(1.0 + m / 8.0, e - 7) : std::ldexp(m / 8.0, -6);
    return (v & 128) ? -x : x;
}

TEST(MmaGpuFp8, TileMatchesReference)
{
    GK_REQUIRE_GPU();
    int dev = 0, major = 0, minor = 0;
    GK_CUDA_OK(cudaGetDevice(&dev));
    GK_CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    GK_CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    if (major * 10 + minor < 89) GTEST_SKIP() << "mma.sync e4m3 needs compute capability 8.9 (this GPU: " << major << "."
                                              << minor << ")";
    GkRng rng(89);
    // codes with exponent field <= 11 (magnitude below 32), never NaN: sums stay well inside fp32
    std::vector<unsigned char> ha(16 * 32), hbt(8 * 32);
    for (unsigned char &v : ha) v = (unsigned char)((rng.next() >> 56) & 0xd7);
    for (unsigned char &v : hbt) v = (unsigned char)((rng.next() >> 56) & 0xd7);
    HostTensor hc(GK_F32, 128);
    hc.fill_uniform(rng, -1, 1);
    DeviceTensor da(GK_F32, 128), dbt(GK_F32, 64), dbk(GK_F32, 64), dc(GK_F32, 128), dd(GK_F32, 128), dd2(GK_F32, 128);
    GK_CUDA_OK(cudaMemcpy(da.ptr(), ha.data(), ha.size(), cudaMemcpyHostToDevice));
    GK_CUDA_OK(cudaMemcpy(dbt.ptr(), hbt.data(), hbt.size(), cudaMemcpyHostToDevice));
    GK_CUDA_OK(dc.upload(hc));
    GK_CUDA_OK(dbk.poison()); // copied by the kernel, not read by the e4m3 path
    GK_CUDA_OK(dd.poison());
    mma_tile_kernel<<<1, 32>>>(da.ptr(), dbt.ptr(), dbk.ptr(), (const float *)dc.ptr(), (float *)dd.ptr(),
                               (float *)dd2.ptr(), 2);
    GK_CUDA_OK(cudaGetLastError());
    GK_CUDA_OK(cudaDeviceSynchronize());
    HostTensor gd(GK_F32, 128);
    GK_CUDA_OK(dd.download(&gd));
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 8; n++) {
            double ref = hc.get(m * 8 + n), mag = std::fabs(ref);
            for (int k = 0; k < 32; k++) {
                const double t = e4m3_value(ha[m * 32 + k]) * e4m3_value(hbt[n * 32 + k]);
                ref += t;
                mag += std::fabs(t);
            }
            EXPECT_NEAR(gd.get(m * 8 + n), ref, 1e-5 * mag) << "D[" << m << "][" << n << "]";
        }
}

TEST(MmaGpuCpAsync, ZeroFillsPastSrcSize)
{
    GK_REQUIRE_GPU();
    for (int bytes : {16, 8, 4, 0}) {
        HostTensor h(GK_F32, 128);
        GkRng rng(bytes);
        h.fill_uniform(rng, 1, 2); // never zero
        DeviceTensor src(GK_F32, 128), dst(GK_F32, 128);
        GK_CUDA_OK(src.upload(h));
        GK_CUDA_OK(dst.poison());
        cp_async_zero_fill_kernel<<<1, 32>>>((const int4 *)src.ptr(), (int4 *)dst.ptr(), bytes);
        GK_CUDA_OK(cudaGetLastError());
        GK_CUDA_OK(cudaDeviceSynchronize());
        HostTensor got(GK_F32, 128);
        GK_CUDA_OK(dst.download(&got));
        for (int i = 0; i < 128; i++) {
            const bool copied = (i % 4) * 4 < bytes;
            EXPECT_EQ(got.get(i), copied ? h.get(i) : 0.0) << "bytes " << bytes << " element " << i;
        }
    }
}
