// Host tests of gk_mma.cuh: the fragment index maps against the PTX ISA's tables, the ldmatrix
// layouts against the mma operands they feed, and the swizzles under a simulation of the 32
// shared-memory banks.
#define GK_CORE_IMPLEMENTATION
#include "gk/gk_mma.cuh"
#include "gk_tests/gk_test.h"

#include <set>
#include <utility>

typedef void (*PosFn)(int lane, int i, int *row, int *col);

// Every element of a rows x cols fragment is held by exactly one (lane, value).
static void expect_covers_once(PosFn f, int values, int rows, int cols)
{
    std::set<std::pair<int, int>> seen;
    for (int lane = 0; lane < 32; lane++)
        for (int i = 0; i < values; i++) {
            int r, c;
            f(lane, i, &r, &c);
            ASSERT_GE(r, 0);
            ASSERT_LT(r, rows);
            ASSERT_GE(c, 0);
            ASSERT_LT(c, cols);
            EXPECT_TRUE(seen.insert({r, c}).second) << "(" << r << ", " << c << ") held twice";
        }
    EXPECT_EQ((int)seen.size(), rows * cols);
}

TEST(MmaFragments, CoverTheirTiles)
{
    expect_covers_once(gk_mma_a_pos, 8, 16, 16);
    expect_covers_once(gk_mma_b_pos, 4, 16, 8);
    expect_covers_once(gk_mma_c_pos, 4, 16, 8);
}

// Entries of the PTX ISA's figures for m16n8k16 (.f16/.bf16): groupID = lane >> 2,
// threadID_in_group = lane % 4; A: row groupID (+8 for a2, a3, a6, a7), col 2 t + (i & 1)
// (+8 for a4..a7); B: row 2 t + (i & 1) (+8 for b2, b3), col groupID; C: row groupID (+8 for
// c2, c3), col 2 t + (i & 1).
TEST(MmaFragments, MatchThePtxIsaTables)
{
    int r, c;
    gk_mma_a_pos(0, 0, &r, &c); EXPECT_EQ(r, 0); EXPECT_EQ(c, 0);
    gk_mma_a_pos(0, 3, &r, &c); EXPECT_EQ(r, 8); EXPECT_EQ(c, 1);
    gk_mma_a_pos(0, 4, &r, &c); EXPECT_EQ(r, 0); EXPECT_EQ(c, 8);
    gk_mma_a_pos(5, 0, &r, &c); EXPECT_EQ(r, 1); EXPECT_EQ(c, 2);
    gk_mma_a_pos(5, 7, &r, &c); EXPECT_EQ(r, 9); EXPECT_EQ(c, 11);
    gk_mma_a_pos(31, 6, &r, &c); EXPECT_EQ(r, 15); EXPECT_EQ(c, 14);
    gk_mma_b_pos(0, 1, &r, &c); EXPECT_EQ(r, 1); EXPECT_EQ(c, 0);
    gk_mma_b_pos(0, 2, &r, &c); EXPECT_EQ(r, 8); EXPECT_EQ(c, 0);
    gk_mma_b_pos(6, 0, &r, &c); EXPECT_EQ(r, 4); EXPECT_EQ(c, 1);
    gk_mma_b_pos(31, 3, &r, &c); EXPECT_EQ(r, 15); EXPECT_EQ(c, 7);
    gk_mma_c_pos(7, 0, &r, &c); EXPECT_EQ(r, 1); EXPECT_EQ(c, 6);
    gk_mma_c_pos(7, 3, &r, &c); EXPECT_EQ(r, 9); EXPECT_EQ(c, 7);
    gk_ldmatrix_pos(5, 0, 0, &r, &c); EXPECT_EQ(r, 1); EXPECT_EQ(c, 2);
    gk_ldmatrix_pos(5, 1, 1, &r, &c); EXPECT_EQ(r, 3); EXPECT_EQ(c, 1);
}

// ldmatrix.x4 over a row-major 16 x 16 A tile (matrix j: rows 8 (j & 1), columns 8 (j >> 1))
// yields the A fragment; .x2 over B stored n-major (B^T row-major) and .x2.trans over B stored
// k-major yield the B fragment. This is how the GEMM feeds mma.sync.
TEST(MmaFragments, LdmatrixFeedsMmaOperands)
{
    for (int lane = 0; lane < 32; lane++)
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 2; i++) {
                int r, c, ar, ac;
                gk_ldmatrix_pos(lane, i, 0, &r, &c);
                gk_mma_a_pos(lane, 2 * j + i, &ar, &ac);
                EXPECT_EQ(r + 8 * (j & 1), ar) << "lane " << lane << " reg " << j;
                EXPECT_EQ(c + 8 * (j >> 1), ac) << "lane " << lane << " reg " << j;
            }
    for (int lane = 0; lane < 32; lane++)
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++) {
                int r, c, br, bc;
                gk_mma_b_pos(lane, 2 * j + i, &br, &bc); // (k, n)
                gk_ldmatrix_pos(lane, i, 0, &r, &c);     // B^T stored [n][k]: matrix j = k 8j..8j+7
                EXPECT_EQ(r, bc);
                EXPECT_EQ(c + 8 * j, br);
                gk_ldmatrix_pos(lane, i, 1, &r, &c);     // B stored [k][n], transposed on the way
                EXPECT_EQ(r + 8 * j, br);
                EXPECT_EQ(c, bc);
            }
}

// m16n8k32 with 8-bit types (e4m3): the PTX ISA's figures give A value i (0..15, four a register)
// row groupID (+8 for a4..a7, a12..a15), col 4 t + (i & 3) (+16 for a8..a15); B value i (0..7) row
// 4 t + (i & 3) (+16 for b4..b7), col groupID. And each is byte i % 2 of 16-bit value
// 2 (i / 4) + (i % 4) / 2 of the m16n8k16 fragment: a tile of 8-bit values, read as 16-bit ones,
// yields the 8-bit fragments through the same ldmatrix calls (fp8 GEMM on the 16-bit machinery).
TEST(MmaFragments, K32EightBitIsK16ReadAsBytePairs)
{
    expect_covers_once(gk_mma_a_pos_k32, 16, 16, 32);
    expect_covers_once(gk_mma_b_pos_k32, 8, 32, 8);
    int r, c;
    gk_mma_a_pos_k32(0, 5, &r, &c); EXPECT_EQ(r, 8); EXPECT_EQ(c, 1);
    gk_mma_a_pos_k32(6, 9, &r, &c); EXPECT_EQ(r, 1); EXPECT_EQ(c, 25);
    gk_mma_a_pos_k32(31, 15, &r, &c); EXPECT_EQ(r, 15); EXPECT_EQ(c, 31);
    gk_mma_b_pos_k32(5, 6, &r, &c); EXPECT_EQ(r, 22); EXPECT_EQ(c, 1);
    for (int lane = 0; lane < 32; lane++) {
        for (int i = 0; i < 16; i++) {
            int r8, c8, r16, c16;
            gk_mma_a_pos_k32(lane, i, &r8, &c8);
            gk_mma_a_pos(lane, 2 * (i / 4) + (i % 4) / 2, &r16, &c16);
            EXPECT_EQ(r8, r16) << "lane " << lane << " value " << i;
            EXPECT_EQ(c8, 2 * c16 + i % 2) << "lane " << lane << " value " << i;
        }
        for (int i = 0; i < 8; i++) {
            int r8, c8, r16, c16;
            gk_mma_b_pos_k32(lane, i, &r8, &c8);
            gk_mma_b_pos(lane, 2 * (i / 4) + (i % 4) / 2, &r16, &c16);
            EXPECT_EQ(r8, 2 * r16 + i % 2) << "lane " << lane << " value " << i;
            EXPECT_EQ(c8, c16) << "lane " << lane << " value " << i;
        }
    }
}

// ------------------------------------------------------------------ swizzles and banks

TEST(Swizzle, IsABijectionWithinEachRow)
{
    for (int w : {32, 64, 128}) {
        std::set<int> offsets;
        for (int r = 0; r < 64; r++) {
            std::set<int> chunks;
            for (int c = 0; c < w / 16; c++) {
                int s = gk_swizzle_chunk(r, c, w);
                EXPECT_GE(s, 0);
                EXPECT_LT(s, w / 16);
                chunks.insert(s);
                offsets.insert(gk_swizzle_offset(r, c, w));
            }
            EXPECT_EQ((int)chunks.size(), w / 16) << "width " << w << " row " << r;
        }
        EXPECT_EQ((int)offsets.size(), 64 * (w / 16));
    }
}

TEST(BankModel, CountsWays)
{
    int same_group[8], spread[8], broadcast[8];
    for (int i = 0; i < 8; i++) {
        same_group[i] = i * 128;  // 8 rows of 128 bytes, chunk 0 of each: one bank group
        spread[i] = i * 16;       // one 128-byte row of banks
        broadcast[i] = 0;         // one address: broadcast
    }
    EXPECT_EQ(gk_bank_conflicts(same_group, 8), 8);
    EXPECT_EQ(gk_bank_conflicts(spread, 8), 1);
    EXPECT_EQ(gk_bank_conflicts(broadcast, 8), 1);
}

// ldmatrix: 8 lanes give the addresses of rows r0..r0+7 at one chunk column.
static int ldmatrix_ways(int w, int r0, int c, bool swizzled)
{
    int addr[8];
    for (int k = 0; k < 8; k++) addr[k] = swizzled ? gk_swizzle_offset(r0 + k, c, w) : (r0 + k) * w + c * 16;
    return gk_bank_conflicts(addr, 8);
}

TEST(Swizzle, LdmatrixReadsAreConflictFree)
{
    for (int w : {32, 64, 128})
        for (int r0 = 0; r0 < 128; r0 += 8)
            for (int c = 0; c < w / 16; c++)
                EXPECT_EQ(ldmatrix_ways(w, r0, c, true), 1) << "width " << w << " rows " << r0 << " chunk " << c;
}

TEST(Swizzle, UnswizzledRowsConflict)
{
    EXPECT_EQ(ldmatrix_ways(64, 0, 0, false), 4);  // 64-byte rows: 4-way
    EXPECT_EQ(ldmatrix_ways(128, 0, 0, false), 8); // 128-byte rows: 8-way
    EXPECT_EQ(ldmatrix_ways(32, 0, 0, false), 2);  // 32-byte rows: 2-way
}

// cp.async fill of a row-major tile: lane l of a warp writes chunk l % C of row base + l / C,
// 16 bytes each, the pattern that keeps the global reads coalesced.
TEST(Swizzle, CpAsyncFillIsConflictFree)
{
    for (int w : {32, 64, 128}) {
        const int chunks = w / 16;
        for (int base = 0; base < 128; base += 32 / chunks) {
            int addr[32];
            for (int l = 0; l < 32; l++) addr[l] = gk_swizzle_offset(base + l / chunks, l % chunks, w);
            EXPECT_EQ(gk_bank_conflicts(addr, 32), 1) << "width " << w << " base row " << base;
        }
    }
}

// ------------------------------------------------------------------ wgmma descriptors

// The descriptor's fields as the PTX ISA lays them out ("Matrix Descriptor Format"), restated
// bit by bit: start address >> 4 in bits 0-13, leading byte offset >> 4 in 16-29, stride byte
// offset >> 4 in 32-45, bits 46-61 zero, swizzle mode in 62-63.
TEST(WgmmaDescriptor, FieldsAsThePtxIsaLaysThemOut)
{
    const unsigned addrs[] = {0, 16, 1024, 0x12340, 0x3fff0};
    const int leads[] = {16, 8192}, swizzles[] = {0, 1, 2, 3};
    for (unsigned addr : addrs)
        for (int lead : leads)
            for (int sw : swizzles) {
                const unsigned long long d = gk_wgmma_desc(addr, lead, 1024, sw);
                EXPECT_EQ(d & 0x3fffull, (unsigned long long)(addr >> 4)) << addr;
                EXPECT_EQ(d >> 14 & 3ull, 0ull);
                EXPECT_EQ(d >> 16 & 0x3fffull, (unsigned long long)(lead >> 4)) << lead;
                EXPECT_EQ(d >> 30 & 3ull, 0ull);
                EXPECT_EQ(d >> 32 & 0x3fffull, 1024ull >> 4);
                EXPECT_EQ(d >> 46 & 0xffffull, 0ull);
                EXPECT_EQ(d >> 62, (unsigned long long)sw);
            }
    // the GEMM's k-steps: + 2 is the start 32 bytes on, + 128 is 2048 bytes on (no carry out of
    // the 14-bit field for tiles inside 227 KB of shared memory)
    for (unsigned addr = 0; addr + 2048 + 3 * 2048 < 227 * 1024; addr += 1024)
        for (int k = 0; k < 4; k++) {
            EXPECT_EQ(gk_wgmma_desc(addr, 16, 1024, 1) + 2 * k, gk_wgmma_desc(addr + 32 * k, 16, 1024, 1));
            EXPECT_EQ(gk_wgmma_desc(addr, 8192, 1024, 1) + 128 * k, gk_wgmma_desc(addr + 2048 * k, 8192, 1024, 1));
        }
}
