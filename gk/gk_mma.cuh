/* gk_mma.cuh - gk tensor-core tile level v0.1: mma.sync, ldmatrix and cp.async wrappers, the
   fragment layouts as index maps, and XOR-swizzled shared-memory layouts.

   Needs gk_core.cuh. Header only, nothing to define: every function is static inline. GEMM,
   attention and quantized kernels build on it; it launches nothing itself.

   WRAPPERS (one per instruction, named after it; sm_80 and newer)
     gk_mma_m16n8k16_bf16(d, a, b, c)   mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
     gk_mma_m16n8k16_f16(d, a, b, c)    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
                                        d, c: 4 floats; a: 4 registers (8 values); b: 2 (4 values)
     gk_ldmatrix_x1/x2/x4(r, p)         ldmatrix.sync.aligned.m8n8.x{1,2,4}.shared.b16
     gk_ldmatrix_x1/x2/x4_trans(r, p)   the same with .trans
                                        p: this lane's row address in shared memory (lanes 8j..8j+7
                                        give rows 0..7 of matrix j); r: one register per matrix
     gk_cp_async_16(dst, src, bytes)    cp.async.cg.shared.global, 16 bytes; bytes < 16 zero-fills
                                        the rest (0: a predicated-off copy that writes zeros)
     gk_cp_async_commit()               cp.async.commit_group
     gk_cp_async_wait_N()               cp.async.wait_group N, N = 0..3; gk_cp_async_wait_all()

   FRAGMENT LAYOUTS (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type")
     gk_mma_a_pos(lane, i, &row, &col)  value i (0..7) of the A fragment (16 x 16, row-major)
     gk_mma_b_pos(lane, i, &row, &col)  value i (0..3) of the B fragment (16 x 8, k x n)
     gk_mma_c_pos(lane, i, &row, &col)  value i (0..3) of the C and D fragments (16 x 8)
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

   DOES NOT
     launch kernels, pick tile sizes (the GEMM header does), use wgmma (sm_90a) or TMA.
*/
#ifndef GK_MMA_CUH
#define GK_MMA_CUH

#include "gk_core.cuh"

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

GK_DEV unsigned gk_smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

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
GK_DEV void gk_ldmatrix_x4(unsigned *r, const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(gk_smem_addr(p)));
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
GK_DEV void gk_ldmatrix_x4_trans(unsigned *r, const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(gk_smem_addr(p)));
}

/* cp.async.cg (L2 only, 16 bytes): [shared dst], [global src], 16, src-size. A src-size below
   16 fills the rest with zeros, which is how tails are predicated without branches. */
GK_DEV void gk_cp_async_16(void *smem_dst, const void *gmem_src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(gk_smem_addr(smem_dst)), "l"(gmem_src),
                 "r"(src_bytes)
                 : "memory");
}
GK_DEV void gk_cp_async_commit(void) { asm volatile("cp.async.commit_group;" ::: "memory"); }
GK_DEV void gk_cp_async_wait_0(void) { asm volatile("cp.async.wait_group 0;" ::: "memory"); }
GK_DEV void gk_cp_async_wait_1(void) { asm volatile("cp.async.wait_group 1;" ::: "memory"); }
GK_DEV void gk_cp_async_wait_2(void) { asm volatile("cp.async.wait_group 2;" ::: "memory"); }
GK_DEV void gk_cp_async_wait_3(void) { asm volatile("cp.async.wait_group 3;" ::: "memory"); }
GK_DEV void gk_cp_async_wait_all(void) { asm volatile("cp.async.wait_all;" ::: "memory"); }

#endif /* GK_MMA_CUH */
