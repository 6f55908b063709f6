/* gk_mma.cuh - gk tensor-core tile level v0.1: mma.sync, ldmatrix and cp.async wrappers, the
   fragment layouts as index maps, XOR-swizzled shared-memory layouts, and the sm_90a wgmma, TMA
   and mbarrier wrappers.

   Needs gk_core.cuh. Header only, nothing to define: every function is static inline. GEMM,
   attention and quantized kernels build on it; it launches nothing itself.

   WRAPPERS (one per instruction, named after it; sm_80 and newer)
     gk_mma_m16n8k16_bf16(d, a, b, c)   mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
     gk_mma_m16n8k16_f16(d, a, b, c)    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
                                        d, c: 4 floats; a: 4 registers (8 values); b: 2 (4 values)
     gk_mma_m16n8k32_e4m3(d, a, b, c)   mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 (sm_89 and
                                        newer): a: 4 registers (16 values), b: 2 (8 values). Native
                                        on sm_89 (QMMA); sm_90 lowers it to e4m3 -> f16 conversions
                                        and f16 MMAs (fp8 rate on Hopper is wgmma's)
     gk_ldmatrix_x1/x2/x4(r, p)         ldmatrix.sync.aligned.m8n8.x{1,2,4}.shared.b16
     gk_ldmatrix_x1/x2/x4_trans(r, p)   the same with .trans
                                        p: this lane's row address in shared memory (lanes 8j..8j+7
                                        give rows 0..7 of matrix j); r: one register per matrix
     gk_ldmatrix_x4_s(r, a), gk_ldmatrix_x4_trans_s(r, a)
                                        the same on a shared-memory address (gk_smem_addr), for
                                        loops that keep their row addresses in registers
     cp.async                           gk_cp_async_16/_4, commit and wait: in gk_core.cuh (the
                                        reduce header's streaming rows use them too)

   FRAGMENT LAYOUTS (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type")
     gk_mma_a_pos(lane, i, &row, &col)  value i (0..7) of the A fragment (16 x 16, row-major)
     gk_mma_b_pos(lane, i, &row, &col)  value i (0..3) of the B fragment (16 x 8, k x n)
     gk_mma_c_pos(lane, i, &row, &col)  value i (0..3) of the C and D fragments (16 x 8)
     gk_mma_a_pos_k32, gk_mma_b_pos_k32 value i of m16n8k32's 8-bit A (0..15) and B (0..7): byte
                                        i % 2 of 16-bit value 2 (i / 4) + (i % 4) / 2, so 8-bit
                                        tiles move as 16-bit ones of half the width
     gk_ldmatrix_pos(lane, i, trans, &row, &col)
                                        value i (0, 1) of the register a lane gets from one 8 x 8
                                        matrix; register j of an .x4 is matrix j
     Value i sits in register i / 2, low half first. All are __host__ __device__: the host tests
     check them against the ISA's tables.

   SWIZZLED SHARED MEMORY
     A tile row of W bytes (W = 32, 64 or 128: 2, 4 or 8 chunks of 16 bytes) stores chunk c of row
     r at chunk gk_swizzle_chunk(r, c, W) = c ^ ((r / (128 / W)) % (W / 16)). Shared memory has 32
     banks of 4 bytes (128 bytes a row of banks), and a 16-byte access by 8 lanes (ldmatrix's row
     addresses, a quarter warp of cp.async or st.shared.v4) is conflict-free when the 8 chunks
     fall in 8 distinct 16-byte bank groups. Without the XOR, ldmatrix down 8 rows of a 128-byte
     tile hits one group 8 times, of a 64-byte tile one group pair 4 times (4-way); with it,
     every such read and the row-major cp.async fill are conflict-free (host test:
     mma_host_test, which simulates the banks).
     gk_swizzle_offset(r, c, W)         byte offset of chunk c of row r in the tile
     gk_bank_conflicts(addr, n)         the bank model itself: worst-case ways of n 16-byte accesses
                                        (n <= 32, processed 8 at a time)

   SM_90A (Hopper; compile with -gencode arch=compute_90a,code=sm_90a, guard callers with
   __CUDA_ARCH_FEAT_SM90_ALL)
     gk_mbar_init(bar, count), gk_mbar_init_fence(), gk_mbar_arrive(bar), gk_mbar_arrive_cluster(bar, rank),
     gk_mbar_arrive_expect_tx(bar, bytes), gk_mbar_wait(bar, parity)
                                        mbarrier.{init, arrive, arrive.expect_tx, try_wait.parity}
     gk_tma_load_2d(dst, map, bar, c0, c1), gk_tma_load_2d_multicast(dst, map, bar, c0, c1, cta_mask)
                                        cp.async.bulk.tensor.2d ... mbarrier::complete_tx::bytes
     gk_mbar_arrive_s, gk_mbar_arrive_cluster_s, gk_mbar_arrive_expect_tx_s, gk_mbar_wait_s,
     gk_tma_load_2d_s, gk_tma_load_2d_multicast_s
                                        the same on shared-memory addresses (gk_smem_addr), for
                                        loops that hold them in registers
     gk_elect_one()                     elect.sync: 1 in one lane of the (whole) warp, 0 in the others;
                                        code under it keeps warp-uniform operands in uniform
                                        registers (a TMA issue does not loop over lanes)
     gk_warp_uniform(v)                 v as lane 0 holds it, through a shuffle: the compiler then
                                        knows it warp-uniform, so what derives from it (a warp or
                                        warpgroup index, wgmma descriptors) stays in uniform registers
     gk_named_barrier(id, threads)      bar.sync id, threads (sm_70 and newer)
     gk_named_barrier_arrive(id, threads)
                                        bar.arrive id, threads: signal without waiting
     gk_named_barrier_or(id, threads, pred)
                                        bar.red.or.pred: bar.sync that returns whether any of the
                                        `threads` passed a nonzero pred (sm_70 and newer)
     gk_setmaxnreg_dec_40(), gk_setmaxnreg_inc_232()
                                        setmaxnreg: a producer warpgroup's registers to consumers
     gk_smem_align_1024(p)              the first 1024-byte boundary of shared memory from p
     gk_wgmma_desc(addr, leading, stride, swizzle)
                                        a shared-memory matrix descriptor (host and device)
     gk_wgmma_desc_sw128(smem, leading_bytes), gk_wgmma_desc_sw128_s(smem_addr, leading_bytes)
                                        the descriptor of a 128-byte-swizzled tile (the layout
                                        TMA's CU_TENSOR_MAP_SWIZZLE_128B writes)
     gk_wgmma_m64k16(d, da, db, dt, n, ta, tb)
                                        wgmma.mma_async.sync.aligned.m64n{16,32,64,128,160,192,256}k16.f32.{bf16,f16}
     gk_wgmma_m64k32_e4m3(d, da, db, n, acc)
                                        wgmma.mma_async.sync.aligned.m64n{16,64,128,256}k32.f32.e4m3.e4m3
                                        (K-major operands; a k32 step is 32 bytes, as a 16-bit k16)
     gk_wgmma_fence(), gk_wgmma_commit(), gk_wgmma_wait_0/1(), gk_wgmma_fence_regs(d, n),
     gk_wgmma_fence_uregs(a, n)         (register A kept live until a wait)
     gk_wgmma_m64k16_rs(d, a, db, dt, n, tb)
                                        the same with A (64 x 16) from registers: 4 a thread, the
                                        m16n8k16 A fragment of its warp's 16 rows
     gk_tma_load_4d(dst, map, bar, c0, c1, c2, c3)
                                        cp.async.bulk.tensor.4d (a box of a strided 4-D tensor)
     gk_bulk_load(dst, src, bytes, bar) cp.async.bulk (contiguous bytes, no tensor map)
     gk_fence_proxy_async()             fence.proxy.async.shared::cta (st.shared before wgmma reads
                                        or a TMA store)
     gk_tma_store_2d(map, src, c0, c1)  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group (a box
                                        of shared memory out; what lies past the tensor is dropped)
     gk_bulk_commit(), gk_bulk_wait_read_1(), gk_bulk_wait_0()
                                        cp.async.bulk.commit_group, .wait_group.read 1, .wait_group 0
     host: gk_tma_map(fn, map, x, dt, rank, dims, strides, box)
                                        a bf16, f16 or e4m3 tensor's TMA map, 128-byte swizzle,
                                        zero fill
           gk_tma_map_words(fn, map, x, rank, dims, strides, box)
                                        the same of 32-bit words, no swizzle
           gk_sm90a_ready(&built, &known, &ready)
                                        the device is 9.0 and the image has sm_90a code
     GK_BUILD_HAS_SM90                  1 when nvcc's target list holds compute capability 9.0

   DOES NOT
     launch kernels or pick tile sizes (the GEMM header does).
*/
#include "gk_core.cuh"

#ifndef GK_MMA_CUH
#define GK_MMA_CUH

/* Whether nvcc's target list (__CUDA_ARCH_LIST__, e.g. 800,900) holds 900: the headers with
   sm_90a kernels (GEMM, attention) build them by default only then. */
#define GK_ARCH_IS_900_(a, b, c, d, e, f, g, h, ...) \
    ((a) == 900 || (b) == 900 || (c) == 900 || (d) == 900 || (e) == 900 || (f) == 900 || (g) == 900 || (h) == 900)
#define GK_ARCH_LIST_HAS_900(...) GK_ARCH_IS_900_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0, 0)
#if defined(__CUDACC__) && defined(__CUDA_ARCH_LIST__)
#if GK_ARCH_LIST_HAS_900(__CUDA_ARCH_LIST__)
#define GK_BUILD_HAS_SM90 1
#endif
#endif
#ifndef GK_BUILD_HAS_SM90
#define GK_BUILD_HAS_SM90 0
#endif

#ifdef __CUDACC__ /* device code only: nothing here for C */

#include <cuda.h> /* CUtensorMap: TMA descriptors */

/* ---------------------------------------------------------------- fragment layouts */

/* lane / 4 is the lane's group (row of C), lane % 4 its index in the group. */
GK_HD void gk_mma_a_pos(int lane, int i, int *row, int *col)
{
    const int g = lane >> 2, t = lane & 3;
    *row = g + ((i & 2) ? 8 : 0);
    *col = t * 2 + (i & 1) + ((i & 4) ? 8 : 0);
}

GK_HD void gk_mma_b_pos(int lane, int i, int *row, int *col)
{
    const int g = lane >> 2, t = lane & 3;
    *row = t * 2 + (i & 1) + ((i & 2) ? 8 : 0);
    *col = g;
}

GK_HD void gk_mma_c_pos(int lane, int i, int *row, int *col)
{
    const int g = lane >> 2, t = lane & 3;
    *row = g + ((i & 2) ? 8 : 0);
    *col = t * 2 + (i & 1);
}

/* The m16n8k32 fragments of 8-bit types (e4m3): value i (0..15) of A, (0..7) of B, four a register,
   lowest byte first. Each is byte i % 2 of 16-bit value 2 (i / 4) + (i % 4) / 2 of the m16n8k16
   fragment of the same lane (the host tests check it): a tile of 8-bit rows, read as 16-bit
   values, moves through ldmatrix, cp.async and the swizzles as a 16-bit tile of half the width,
   and its fragments are ready for the 8-bit MMA. */
GK_HD void gk_mma_a_pos_k32(int lane, int i, int *row, int *col)
{
    const int g = lane >> 2, t = lane & 3;
    *row = g + ((i & 4) ? 8 : 0);
    *col = t * 4 + (i & 3) + ((i & 8) ? 16 : 0);
}

GK_HD void gk_mma_b_pos_k32(int lane, int i, int *row, int *col)
{
    const int g = lane >> 2, t = lane & 3;
    *row = t * 4 + (i & 3) + ((i & 4) ? 16 : 0);
    *col = g;
}

/* One 8 x 8 matrix of 16-bit values through ldmatrix: lane gets row lane / 4, columns
   2 (lane % 4) and +1; with .trans, the transpose. */
GK_HD void gk_ldmatrix_pos(int lane, int i, int trans, int *row, int *col)
{
    const int r = lane >> 2, c = (lane & 3) * 2 + i;
    *row = trans ? c : r;
    *col = trans ? r : c;
}

/* ---------------------------------------------------------------- swizzles and the bank model */

GK_HD int gk_swizzle_chunk(int row, int chunk, int row_bytes)
{
    const int chunks = row_bytes / 16, rows_per_line = 128 / row_bytes;
    return chunk ^ ((row / rows_per_line) % chunks);
}

GK_HD int gk_swizzle_offset(int row, int chunk, int row_bytes)
{
    return row * row_bytes + gk_swizzle_chunk(row, chunk, row_bytes) * 16;
}

/* Worst-case ways of n 16-byte shared-memory accesses at byte offsets addr[0..n): the hardware
   serves them 8 at a time (a quarter warp, 128 bytes); within those 8, accesses to different
   addresses in the same 16-byte bank group serialize, the same address is broadcast. */
GK_HD int gk_bank_conflicts(const int *addr, int n)
{
    int worst = 1;
    for (int q = 0; q < n; q += 8)
        for (int group = 0; group < 8; group++) {
            int ways = 0;
            for (int i = q; i < q + 8 && i < n; i++) {
                if (((addr[i] >> 4) & 7) != group) continue;
                int first = 1; /* each distinct 16-byte chunk counts once */
                for (int j = q; j < i; j++) first &= (addr[j] >> 4) != (addr[i] >> 4);
                ways += first;
            }
            if (ways > worst) worst = ways;
        }
    return worst;
}

/* ---------------------------------------------------------------- PTX wrappers */

/* D = A B + C, 16 x 8 x 16, fp32 accumulators. Not volatile: a pure function of its registers,
   so the compiler may interleave it with the next fragments' loads.
   operands: d {4 x f32}, a {4 x b32: 8 bf16}, b {2 x b32: 4 bf16}, c {4 x f32} */
GK_DEV void gk_mma_m16n8k16_bf16(float *d, const unsigned *a, const unsigned *b, const float *c)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                   "f"(c[2]), "f"(c[3]));
}

GK_DEV void gk_mma_m16n8k16_f16(float *d, const unsigned *a, const unsigned *b, const float *c)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                   "f"(c[2]), "f"(c[3]));
}

/* D = A B + C, 16 x 8 x 32, fp8 e4m3 operands, fp32 accumulators: compute capability 8.9 and
   later (an older target traps; sm_90 runs it as conversions to f16 and f16 MMAs). operands:
   d {4 x f32}, a {4 x b32: 16 e4m3}, b {2 x b32: 8 e4m3}, c {4 x f32} */
GK_DEV void gk_mma_m16n8k32_e4m3(float *d, const unsigned *a, const unsigned *b, const float *c)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                   "f"(c[2]), "f"(c[3]));
#else
    (void)a;
    (void)b;
    for (int i = 0; i < 4; i++) d[i] = c[i];
    __trap();
#endif
}

/* ldmatrix: operands {1, 2 or 4 x b32}, [this lane's row address in shared memory] */
GK_DEV void gk_ldmatrix_x1(unsigned *r, const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(gk_smem_addr(p)));
}
GK_DEV void gk_ldmatrix_x2(unsigned *r, const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(gk_smem_addr(p)));
}
GK_DEV void gk_ldmatrix_x4_s(unsigned *r, unsigned a)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
GK_DEV void gk_ldmatrix_x4(unsigned *r, const void *p) { gk_ldmatrix_x4_s(r, gk_smem_addr(p)); }
GK_DEV void gk_ldmatrix_x4_trans_s(unsigned *r, unsigned a)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
GK_DEV void gk_ldmatrix_x1_trans(unsigned *r, const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(gk_smem_addr(p)));
}
GK_DEV void gk_ldmatrix_x2_trans(unsigned *r, const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(gk_smem_addr(p)));
}
GK_DEV void gk_ldmatrix_x4_trans(unsigned *r, const void *p) { gk_ldmatrix_x4_trans_s(r, gk_smem_addr(p)); }


/* ---------------------------------------------------------------- sm_90a: mbarrier, TMA, wgmma

   These need a build for sm_90a (-gencode arch=compute_90a,code=sm_90a); callers guard their use
   with __CUDA_ARCH_FEAT_SM90_ALL. An mbarrier is 8 bytes of shared memory; its phase flips when
   the expected arrivals and transaction bytes have all come in, and waiters name the parity of
   the phase they wait for. */
GK_DEV void gk_mbar_init(void *bar, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(gk_smem_addr(bar)), "r"(count) : "memory");
}
/* makes the initialized barriers visible to the async proxy (TMA) */
GK_DEV void gk_mbar_init_fence(void) { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
GK_DEV void gk_mbar_arrive_s(unsigned bar) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory"); }
GK_DEV void gk_mbar_arrive(void *bar) { gk_mbar_arrive_s(gk_smem_addr(bar)); }
/* an arrival on the barrier at bar's offset in the cluster's block `rank`, with the default
   semantics (release at CTA scope). .release.cluster puts a GPU-wide MEMBAR before each arrival:
   a consumer freeing its stages that way made the 2-block GEMM tile half as fast (H200). */
GK_DEV void gk_mbar_arrive_cluster_s(unsigned bar, int rank)
{
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(gk_cluster_map_s(bar, rank)) : "memory");
}
GK_DEV void gk_mbar_arrive_cluster(void *bar, int rank) { gk_mbar_arrive_cluster_s(gk_smem_addr(bar), rank); }
/* one arrival that also expects `bytes` more from TMA copies (complete_tx). The *_s forms take
   shared-memory addresses (gk_smem_addr), for loops that keep them in registers: a generic
   pointer's conversion re-reads the block's shared window each time. */
GK_DEV void gk_mbar_arrive_expect_tx_s(unsigned bar, int bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
GK_DEV void gk_mbar_arrive_expect_tx(void *bar, int bytes) { gk_mbar_arrive_expect_tx_s(gk_smem_addr(bar), bytes); }
/* until the phase of `parity` has completed (parity 1 on a fresh barrier: at once, the phase
   before its first counting as complete) */
GK_DEV void gk_mbar_wait_s(unsigned bar, int parity)
{
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
}
GK_DEV void gk_mbar_wait(void *bar, int parity) { gk_mbar_wait_s(gk_smem_addr(bar), parity); }

GK_DEV int gk_warp_uniform(int v) { return __shfl_sync(0xffffffffu, v, 0); }

GK_DEV int gk_elect_one(void)
{
    unsigned one;
    asm volatile("{ .reg .pred e; elect.sync _|e, 0xffffffff; selp.u32 %0, 1, 0, e; }" : "=r"(one));
    return (int)one;
}

/* TMA: a 2-D box of a tensor map (c0 the contiguous coordinate) into shared memory; the bytes
   count against bar's transaction. Boxes past the tensor's edge are zero-filled. */
GK_DEV void gk_tma_load_2d_s(unsigned dst, const void *tensor_map, unsigned bar, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(dst), "l"(tensor_map), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}
GK_DEV void gk_tma_load_2d(void *dst, const void *tensor_map, void *bar, int c0, int c1)
{
    gk_tma_load_2d_s(gk_smem_addr(dst), tensor_map, gk_smem_addr(bar), c0, c1);
}

/* The same box written to the same offset of dst in the shared memory of every block of the
   cluster in cta_mask (bit r: rank r), each block's bar at bar's offset counting its bytes. */
GK_DEV void gk_tma_load_2d_multicast_s(unsigned dst, const void *tensor_map, unsigned bar, int c0, int c1, int cta_mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;"
                 ::"r"(dst), "l"(tensor_map), "r"(c0), "r"(c1), "r"(bar), "h"((unsigned short)cta_mask)
                 : "memory");
}
GK_DEV void gk_tma_load_2d_multicast(void *dst, const void *tensor_map, void *bar, int c0, int c1, int cta_mask)
{
    gk_tma_load_2d_multicast_s(gk_smem_addr(dst), tensor_map, gk_smem_addr(bar), c0, c1, cta_mask);
}

/* The same for a 4-D tensor map (coordinates innermost first). */
GK_DEV void gk_tma_load_4d(void *dst, const void *tensor_map, void *bar, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                 ::"r"(gk_smem_addr(dst)), "l"(tensor_map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(gk_smem_addr(bar))
                 : "memory");
}

/* TMA: shared memory (laid out as the map's box, in its swizzle) out to the tensor's box at (c0,
   c1), in this thread's current bulk group; rows and columns past the tensor's edge are not
   written. The writes to src must be fenced for the async proxy first (gk_fence_proxy_async). */
GK_DEV void gk_tma_store_2d(const void *tensor_map, const void *src, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                 ::"l"(tensor_map), "r"(gk_smem_addr(src)), "r"(c0), "r"(c1)
                 : "memory");
}

/* This thread's bulk copies so far become a group. */
GK_DEV void gk_bulk_commit(void) { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

/* Until at most the latest of this thread's bulk groups still reads its shared memory. */
GK_DEV void gk_bulk_wait_read_1(void) { asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory"); }

/* Until every bulk group of this thread has completed. */
GK_DEV void gk_bulk_wait_0(void) { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

/* A bulk copy (no tensor map) of bytes (a multiple of 16; dst and src 16-byte aligned) into
   shared memory; the bytes count against bar's transaction. */
GK_DEV void gk_bulk_load(void *dst, const void *src, int bytes, void *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(gk_smem_addr(dst)), "l"(src), "r"(bytes), "r"(gk_smem_addr(bar))
                 : "memory");
}

/* bar.sync on a named barrier (1..15; 0 is __syncthreads) for `threads` threads, a multiple of
   32: a subset of the block, such as one warpgroup, synchronizes alone. */
GK_DEV void gk_named_barrier(int id, int threads) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory"); }
/* bar.arrive: counts toward barrier id's `threads` without waiting (a signal to its syncers). */
GK_DEV void gk_named_barrier_arrive(int id, int threads)
{
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/* bar.red.or.pred: the barrier, and whether any of its threads passed a nonzero pred (one
   thread's finding to the rest without shared memory). */
GK_DEV int gk_named_barrier_or(int id, int threads, int pred)
{
    int any;
    asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.s32 p, %1, 0;\n\tbar.red.or.pred q, %2, %3, p;\n\t"
                 "selp.s32 %0, 1, 0, q;\n\t}"
                 : "=r"(any)
                 : "r"(pred), "r"(id), "r"(threads)
                 : "memory");
    return any;
}

/* Register budget of the calling warpgroup (setmaxnreg): a producer gives registers back, the
   consumers take them. */
GK_DEV void gk_setmaxnreg_dec_40(void) { asm volatile("setmaxnreg.dec.sync.aligned.u32 40;"); }
GK_DEV void gk_setmaxnreg_inc_232(void) { asm volatile("setmaxnreg.inc.sync.aligned.u32 232;"); }

/* The first 1024-byte boundary of shared memory at or after p: the 128-byte swizzle repeats
   every 1024 bytes, so tiles in that layout (TMA writes, wgmma reads) start on one. */
GK_DEV char *gk_smem_align_1024(void *p) { return (char *)p + ((1024 - (gk_smem_addr(p) & 1023)) & 1023); }

/* A wgmma shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start
   address >> 4 in bits 0-13, leading dimension byte offset >> 4 in 16-29, stride dimension
   byte offset >> 4 in 32-45, swizzle mode in 62-63 (0 none, 1 128-byte, 2 64-byte, 3 32-byte).
   Host and device: mma_host_test checks the fields. */
GK_HD unsigned long long gk_wgmma_desc(unsigned smem_addr, int leading_bytes, int stride_bytes, int swizzle)
{
    return (unsigned long long)((smem_addr & 0x3FFFF) >> 4) | (unsigned long long)((leading_bytes & 0x3FFFF) >> 4) << 16 |
           (unsigned long long)((stride_bytes & 0x3FFFF) >> 4) << 32 | (unsigned long long)(swizzle & 3) << 62;
}

/* The descriptor of a tile laid out with the 128-byte swizzle (TMA's CU_TENSOR_MAP_SWIZZLE_128B:
   16-byte chunk c of row r at chunk c ^ (r % 8), 1024-byte aligned groups of 8 rows of 128
   bytes). K-major operands: the stride is 1024 (8 rows of 128 bytes), the leading offset unused
   (16, encoded 1). MN-major: stride 1024 (8 k-rows), leading = bytes between 64-wide MN panels.
   Adding 2 to the descriptor moves its start 32 bytes (16 K values of a K-major tile); 128
   moves it 2048 bytes (16 k-rows of an MN-major panel). */
GK_DEV unsigned long long gk_wgmma_desc_sw128_s(unsigned smem_addr, int leading_bytes)
{
    return gk_wgmma_desc(smem_addr, leading_bytes, 1024, 1);
}
GK_DEV unsigned long long gk_wgmma_desc_sw128(const void *smem, int leading_bytes)
{
    return gk_wgmma_desc_sw128_s(gk_smem_addr(smem), leading_bytes);
}
/* The descriptor d moved by `add` in its low word (the start address field, bits 0-13: no carry
   out for shared addresses under 256 KB): a 32-bit add where the compiler would do 64 bits and
   move both halves into uniform registers again for every wgmma. */
GK_DEV unsigned long long gk_wgmma_desc_add(unsigned long long d, unsigned add)
{
    return (unsigned long long)(unsigned)(d >> 32) << 32 | (unsigned)((unsigned)d + add);
}

/* orders this thread's ordinary shared-memory writes before later async-proxy reads (wgmma, TMA) */
GK_DEV void gk_fence_proxy_async(void) { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

GK_DEV void gk_wgmma_fence(void) { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
GK_DEV void gk_wgmma_commit(void) { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
GK_DEV void gk_wgmma_wait_0(void) { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
GK_DEV void gk_wgmma_wait_1(void) { asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory"); }

/* Keeps the compiler from moving accumulator reads or writes across a wgmma wait. */
GK_DEV void gk_wgmma_fence_regs(float *d, int n)
{
#pragma unroll
    for (int i = 0; i < n; i++) asm volatile("" : "+f"(d[i])::"memory");
}

/* The same for a wgmma's A registers: the compiler keeps them (and does not reuse them) until
   here, after the wait that ends the wgmma reading them. */
GK_DEV void gk_wgmma_fence_uregs(unsigned *a, int n)
{
#pragma unroll
    for (int i = 0; i < n; i++) asm volatile("" : "+r"(a[i])::"memory");
}

#define GK_WG_D8(i)                                                                                             \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
        "+f"(d[i + 7])
#define GK_WG_D64 GK_WG_D8(0), GK_WG_D8(8), GK_WG_D8(16), GK_WG_D8(24), GK_WG_D8(32), GK_WG_D8(40), GK_WG_D8(48), GK_WG_D8(56)
#define GK_WG_D128 GK_WG_D64, GK_WG_D8(64), GK_WG_D8(72), GK_WG_D8(80), GK_WG_D8(88), GK_WG_D8(96), GK_WG_D8(104), \
                   GK_WG_D8(112), GK_WG_D8(120)
#define GK_WG_D96 GK_WG_D64, GK_WG_D8(64), GK_WG_D8(72), GK_WG_D8(80), GK_WG_D8(88)
#define GK_WG_D80 GK_WG_D64, GK_WG_D8(64), GK_WG_D8(72)
/* one wgmma, D += A B: SHAPE the k, types part ("k16.f32.bf16.bf16"), TAIL the imm-trans operands of
   16-bit types (", 0, 1": B MN-major), "" for fp8 (K-major only) */
#define GK_WGMMA_N256(SHAPE, TAIL)                                                                             \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %130, 0;\n"                                                    \
                 "wgmma.mma_async.sync.aligned.m64n256" SHAPE " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1" TAIL "; }" \
                 : GK_WG_D128                                                                                   \
                 : "l"(da), "l"(db), "r"(acc))
#define GK_WGMMA_N192(SHAPE, TAIL)                                                                             \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %98, 0;\n"                                                     \
                 "wgmma.mma_async.sync.aligned.m64n192" SHAPE " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, p, 1, 1" TAIL "; }" \
                 : GK_WG_D96                                                                                    \
                 : "l"(da), "l"(db), "r"(acc))
#define GK_WGMMA_N160(SHAPE, TAIL)                                                                             \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %82, 0;\n"                                                     \
                 "wgmma.mma_async.sync.aligned.m64n160" SHAPE " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79}, %80, %81, p, 1, 1" TAIL "; }" \
                 : GK_WG_D80                                                                                    \
                 : "l"(da), "l"(db), "r"(acc))
#define GK_WGMMA_N128(SHAPE, TAIL)                                                                             \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %66, 0;\n"                                                     \
                 "wgmma.mma_async.sync.aligned.m64n128" SHAPE " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1" TAIL "; }" \
                 : GK_WG_D64                                                                                    \
                 : "l"(da), "l"(db), "r"(acc))
#define GK_WGMMA_N64(SHAPE, TAIL)                                                                              \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %34, 0;\n"                                                     \
                 "wgmma.mma_async.sync.aligned.m64n64" SHAPE " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1" TAIL "; }" \
                 : GK_WG_D8(0), GK_WG_D8(8), GK_WG_D8(16), GK_WG_D8(24)                                         \
                 : "l"(da), "l"(db), "r"(acc))
#define GK_WGMMA_N32(SHAPE, TAIL)                                                                              \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %18, 0;\n"                                                     \
                 "wgmma.mma_async.sync.aligned.m64n32" SHAPE " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1" TAIL "; }" \
                 : GK_WG_D8(0), GK_WG_D8(8)                                                                     \
                 : "l"(da), "l"(db), "r"(acc))
#define GK_WGMMA_N16(SHAPE, TAIL)                                                                              \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %10, 0;\n"                                                     \
                 "wgmma.mma_async.sync.aligned.m64n16" SHAPE " {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1" TAIL "; }" \
                 : GK_WG_D8(0)                                                                                  \
                 : "l"(da), "l"(db), "r"(acc))
#define GK_WGMMA_LAYOUTS(N, TYPE)                                                  \
    do {                                                                           \
        if (!ta && !tb) GK_WGMMA_##N("k16.f32." TYPE "." TYPE, ", 0, 0");          \
        else if (!ta) GK_WGMMA_##N("k16.f32." TYPE "." TYPE, ", 0, 1");            \
        else if (!tb) GK_WGMMA_##N("k16.f32." TYPE "." TYPE, ", 1, 0");            \
        else GK_WGMMA_##N("k16.f32." TYPE "." TYPE, ", 1, 1");                     \
    } while (0)

/* wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}, N 256, 192, 160, 128, 64, 32 or 16: a warpgroup's D
   (64 x N fp32, N / 2 registers a thread: value 4 j + i at row 16 (warp % 4) + lane / 4 +
   8 (i / 2), column 8 j + 2 (lane % 4) + i % 2) = A (64 x 16, descriptor da) B (16 x N,
   descriptor db) + (acc ? D : 0), both from shared memory; ta / tb: the operand is MN-major.
   acc 0 starts D without zeroing registers first (a zeroing move between wgmma.fence and the
   wgmma serializes the pipeline). Asynchronous: commit, then wait before D is read. dt, n, ta,
   tb must be constants after inlining. */
GK_DEV void gk_wgmma_m64k16(float *d, unsigned long long da, unsigned long long db, int dt, int n, int ta, int tb, int acc)
{
    if (n == 256) {
        if (dt == GK_BF16) GK_WGMMA_LAYOUTS(N256, "bf16");
        else GK_WGMMA_LAYOUTS(N256, "f16");
    } else if (n == 192) {
        if (dt == GK_BF16) GK_WGMMA_LAYOUTS(N192, "bf16");
        else GK_WGMMA_LAYOUTS(N192, "f16");
    } else if (n == 160) {
        if (dt == GK_BF16) GK_WGMMA_LAYOUTS(N160, "bf16");
        else GK_WGMMA_LAYOUTS(N160, "f16");
    } else if (n == 128) {
        if (dt == GK_BF16) GK_WGMMA_LAYOUTS(N128, "bf16");
        else GK_WGMMA_LAYOUTS(N128, "f16");
    } else if (n == 64) {
        if (dt == GK_BF16) GK_WGMMA_LAYOUTS(N64, "bf16");
        else GK_WGMMA_LAYOUTS(N64, "f16");
    } else if (n == 32) {
        if (dt == GK_BF16) GK_WGMMA_LAYOUTS(N32, "bf16");
        else GK_WGMMA_LAYOUTS(N32, "f16");
    } else {
        if (dt == GK_BF16) GK_WGMMA_LAYOUTS(N16, "bf16");
        else GK_WGMMA_LAYOUTS(N16, "f16");
    }
}


/* wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3, N 256, 128, 64 or 16: D (as
   gk_wgmma_m64k16's) = A (64 x 32 e4m3) B (32 x N) + (acc ? D : 0), both operands K-major (fp8
   wgmma has no transposed form) in shared memory. A k32 step is 32 bytes of a row, as a k16 step of
   a 16-bit type: the same descriptors and steps serve both. n must be a constant after inlining. */
GK_DEV void gk_wgmma_m64k32_e4m3(float *d, unsigned long long da, unsigned long long db, int n, int acc)
{
    if (n == 256) GK_WGMMA_N256("k32.f32.e4m3.e4m3", "");
    else if (n == 128) GK_WGMMA_N128("k32.f32.e4m3.e4m3", "");
    else if (n == 64) GK_WGMMA_N64("k32.f32.e4m3.e4m3", "");
    else GK_WGMMA_N16("k32.f32.e4m3.e4m3", "");
}

/* A from registers (4 a thread: the m16n8k16 A fragment of the warp's 16 rows of the 64), B from
   shared memory; TB 1: B is MN-major. */
#define GK_WGMMA_RS_N256(TYPE, TB)                                                                              \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %133, 0;\n"                                                    \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132, p, 1, 1, " \
                 #TB "; }"                                                                                      \
                 : GK_WG_D128                                                                                   \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1))
#define GK_WGMMA_RS_N128(TYPE, TB)                                                                              \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %69, 0;\n"                                                     \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, " \
                 #TB "; }"                                                                                      \
                 : GK_WG_D64                                                                                    \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1))
#define GK_WGMMA_RS_N64(TYPE, TB)                                                                               \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %37, 0;\n"                                                     \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, " \
                 #TB "; }"                                                                                      \
                 : GK_WG_D8(0), GK_WG_D8(8), GK_WG_D8(16), GK_WG_D8(24)                                         \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1))
#define GK_WGMMA_RS_N32(TYPE, TB)                                                                               \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %21, 0;\n"                                                     \
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, 1, " \
                 #TB "; }"                                                                                      \
                 : GK_WG_D8(0), GK_WG_D8(8)                                                                     \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1))
#define GK_WGMMA_RS_N16(TYPE, TB)                                                                               \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %13, 0;\n"                                                     \
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1, " \
                 #TB "; }"                                                                                      \
                 : GK_WG_D8(0)                                                                                  \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1))
#define GK_WGMMA_RS_LAYOUTS(N, TYPE)            \
    do {                                        \
        if (!tb) GK_WGMMA_RS_##N(TYPE, 0);      \
        else GK_WGMMA_RS_##N(TYPE, 1);          \
    } while (0)

/* wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16} with A from registers, N 256, 128, 64, 32
   or 16: D (as gk_wgmma_m64k16's) += A B; a: this thread's 4 registers of A (the m16n8k16 A
   fragment of rows 16 (warp % 4) .. +15); tb: B is MN-major. dt, n, tb constants after inlining. */
GK_DEV void gk_wgmma_m64k16_rs(float *d, const unsigned *a, unsigned long long db, int dt, int n, int tb)
{
    if (n == 256) {
        if (dt == GK_BF16) GK_WGMMA_RS_LAYOUTS(N256, "bf16");
        else GK_WGMMA_RS_LAYOUTS(N256, "f16");
    } else if (n == 128) {
        if (dt == GK_BF16) GK_WGMMA_RS_LAYOUTS(N128, "bf16");
        else GK_WGMMA_RS_LAYOUTS(N128, "f16");
    } else if (n == 64) {
        if (dt == GK_BF16) GK_WGMMA_RS_LAYOUTS(N64, "bf16");
        else GK_WGMMA_RS_LAYOUTS(N64, "f16");
    } else if (n == 32) {
        if (dt == GK_BF16) GK_WGMMA_RS_LAYOUTS(N32, "bf16");
        else GK_WGMMA_RS_LAYOUTS(N32, "f16");
    } else {
        if (dt == GK_BF16) GK_WGMMA_RS_LAYOUTS(N16, "bf16");
        else GK_WGMMA_RS_LAYOUTS(N16, "f16");
    }
}

/* ---------------------------------------------------------------- sm_90a, host side

   The TMA descriptor encoder (found through the runtime: no -lcuda) and whether the running
   image holds sm_90a code. */
typedef CUresult (*gk_tensor_map_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                            const cuuint64_t *, const cuuint32_t *, const cuuint32_t *,
                                            CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                            CUtensorMapFloatOOBfill);

/* The driver's cuTensorMapEncodeTiled, found through the runtime once (no -lcuda). */
GK_HOST cudaError_t gk_tma_encoder(const char *fn, gk_tensor_map_encode_fn *out)
{
    static gk_tensor_map_encode_fn encode;
    if (!encode) {
        void *f = NULL;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess || !f)
            return gk__fail(cudaErrorNotSupported, fn, "the driver has no cuTensorMapEncodeTiled");
        encode = (gk_tensor_map_encode_fn)f;
    }
    *out = encode;
    return cudaSuccess;
}

/* A rank-dimensional tensor of type elements (elem bytes each; dims[0] contiguous; strides[i] in
   elements between steps of dimension i + 1, 16 bytes' multiples) as a TMA map of box[] boxes,
   zero-filled past every dimension's end. */
GK_HOST cudaError_t gk_tma_encode(const char *fn, CUtensorMap *map, const void *x, CUtensorMapDataType type, int elem,
                                 int rank, const int64_t *dims, const int64_t *strides, const int *box,
                                 CUtensorMapSwizzle swizzle)
{
    gk_tensor_map_encode_fn encode = NULL;
    GK_TRY(gk_tma_encoder(fn, &encode));
    cuuint64_t d[5], st[4];
    cuuint32_t b[5], one[5];
    int lines = gk_is_aligned(x, 128); /* every row starts an L2 line */
    for (int i = 0; i < rank; i++) {
        d[i] = (cuuint64_t)dims[i];
        b[i] = (cuuint32_t)box[i];
        one[i] = 1;
        if (i > 0) st[i - 1] = (cuuint64_t)strides[i - 1] * elem;
        if (i > 0 && st[i - 1] % 128) lines = 0;
    }
    /* L2 promotion to 256 bytes where rows start lines; none where they straddle them (H200
       GEMMs of such rows: 1.05-1.15x faster without; on lines, 256 bytes up to 1.06x faster) */
    const CUresult r = encode(map, type, (cuuint32_t)rank, (void *)x, d, st, b, one, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              swizzle, lines ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_NONE,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) return gk__fail(cudaErrorInvalidValue, fn, "cuTensorMapEncodeTiled failed (CUresult %d)", (int)r);
    return cudaSuccess;
}

/* A rank-dimensional tensor of dt values (bf16, f16 or e4m3) as a TMA map of box[] boxes, box[0]
   128 bytes (64 16-bit values, 128 e4m3: the 128-byte swizzle that wgmma's descriptors read). */
GK_HOST cudaError_t gk_tma_map(const char *fn, CUtensorMap *map, const void *x, int dt, int rank, const int64_t *dims,
                               const int64_t *strides, const int *box)
{
    const CUtensorMapDataType type = dt == GK_F16    ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                     : dt == GK_E4M3 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                                     : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    return gk_tma_encode(fn, map, x, type, gk_dtype_size(dt), rank, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
}

/* The same for a tensor of 32-bit words copied as they are (no swizzle; box[0] 4 to 1024 bytes,
   a multiple of 16). */
GK_HOST cudaError_t gk_tma_map_words(const char *fn, CUtensorMap *map, const void *x, int rank, const int64_t *dims,
                                     const int64_t *strides, const int *box)
{
    return gk_tma_encode(fn, map, x, CU_TENSOR_MAP_DATA_TYPE_UINT32, 4, rank, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE);
}

/* 1 when the current device is compute capability 9.0 and *built, a __device__ int the caller's
   translation unit sets to 1 in its sm_90a image, reads 1 there. Asked once per device (the
   first 32; others every call), through *known and *ready. */
GK_HOST int gk_sm90a_ready(const void *built_symbol, unsigned *known, unsigned *ready)
{
    int dev = 0, major = 0, minor = 0, built = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 0;
    if (dev < 32 && (*known >> dev & 1u)) return *ready >> dev & 1u;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
        major = 0;
    if (major == 9 && minor == 0 && cudaMemcpyFromSymbol(&built, built_symbol, sizeof built) != cudaSuccess) {
        built = 0;
        (void)cudaGetLastError();
    }
    const int r = major == 9 && minor == 0 && built;
    if (dev < 32) {
        *known |= 1u << dev;
        if (r) *ready |= 1u << dev;
    }
    return r;
}

#endif /* __CUDACC__ */

#endif /* GK_MMA_CUH */
