// GPU tests of gk_core.cuh's device building blocks: warp and block reductions against a CPU
// reference in double, their determinism, and the 16-byte loads and stores. Skipped without a GPU.
#define GK_CORE_IMPLEMENTATION
#include "gk/gk_core.cuh"
#include "gk_tests/gk_test.h"

#include <cmath>

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
