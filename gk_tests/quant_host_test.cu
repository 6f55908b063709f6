// Host tests of gk_quant.cuh (no GPU needed): the prepacked layout against the mma.m16n8k16 A
// fragment it feeds (gk_w4_code_pos against gk_mma_a_pos and quant_ref.h's own table), AWQ's nibble
// order, gk_w4_packed_bytes (the manual's formula) and its refusals, the ledger, the configurations,
// quant_ref.h's packers (round trips and hand-built words) and dequantization (hand-computed values),
// and the argument validation of every public entry point. Validation runs before any CUDA call,
// so the calls get fake device addresses (kFake); a call that passes every check is shown accepted
// only where there is no GPU, where it then stops at the CUDA runtime with another error.
#define GK_CORE_IMPLEMENTATION
#define GK_GEMM_IMPLEMENTATION
#define GK_QUANT_IMPLEMENTATION
#define GK_GEMM_SM90 0
#include "gk/gk_quant.cuh"
#include "gk_tests/gk_test.h"
#include "gk_tests/quant_ref.h"
#include "gk_tests/quant_emu.h"

#include <algorithm>
#include <climits>
#include <set>
#include <string>
#include <tuple>
#include <vector>

static char *const kFake = (char *)0x20000000; // 256-byte aligned; buffers 64 MB apart
static const int64_t kMB = 1 << 20;

static bool no_gpu()
{
    std::string why;
    return !gk_test_gpu_available(&why);
}

static bool has(const std::string &s, const std::string &needle) { return s.find(needle) != std::string::npos; }

// ------------------------------------------------------------------ layout

// Every value i of every lane's m16n8k16 A fragment, for each of a unit's four k16 steps: the
// prepacked form keeps it in that lane's 16 bytes, word = the step, nibble = register (i / 2) + 4
// (i % 2) (the two halves of register e in nibbles e and e + 4), and gk_w4_code_pos says it is
// multiplied as the fragment's column. The k it holds is the one the manual gives that column
// (lane t's columns 2t, 2t + 1, 2t + 8, 2t + 9 of step s are k 32 (s / 2) + 8 t + 4 (s % 2) + 0..3).
// So one 16-byte load a lane is the four steps' A fragments of a 16-row tile.
TEST(QuantLayout, CodePosFeedsTheAFragment)
{
    for (int step = 0; step < 4; step++)
        for (int lane = 0; lane < 32; lane++)
            for (int i = 0; i < 8; i++) {
                int row, col;
                gk_mma_a_pos(lane, i, &row, &col);
                const int kk = gk_qref_k_of(step, col);
                int l = -1, w = -1, nib = -1, c = -1;
                gk_w4_code_pos(row, kk, &l, &w, &nib, &c);
                EXPECT_EQ(l, lane) << "row " << row << " k " << kk;
                EXPECT_EQ(w, step) << "row " << row << " k " << kk;
                EXPECT_EQ(nib, i / 2 + 4 * (i % 2)) << "row " << row << " k " << kk << " value " << i;
                EXPECT_EQ(c, col) << "row " << row << " k " << kk;
                int rl, rw, rn, rc; // quant_ref.h's table, written from the manual and the ISA
                gk_qref_code_pos(row, kk, &rl, &rw, &rn, &rc);
                EXPECT_EQ(rl, lane);
                EXPECT_EQ(rw, step);
                EXPECT_EQ(rn, nib);
                EXPECT_EQ(rc, col);
            }
}

// The X side: lane (g, t) of the B fragment loads token g's k 8 t .. 8 t + 7 and 32 + 8 t ..
// 32 + 8 t + 7 of the unit, word 2 s + h of them register h of step s (gk_w4_load_x). Each B value's row (the MMA's k index) must
// be the column that the A code of the same k is multiplied as, in the same step: then every
// product the MMA forms is of a code and the X value of the same k.
TEST(QuantLayout, XFragmentsMeetTheirCodes)
{
    for (int step = 0; step < 4; step++)
        for (int lane = 0; lane < 32; lane++)
            for (int i = 0; i < 4; i++) {
                int brow, bcol;
                gk_mma_b_pos(lane, i, &brow, &bcol); // brow: the k index, bcol: the token
                EXPECT_EQ(bcol, lane / 4);
                // element of the lane's two 16-byte chunks: word 2 s + h, half i % 2
                const int kk = 32 * (step / 2) + 8 * (lane % 4) + 4 * (step % 2) + 2 * (i / 2) + i % 2;
                for (int row = 0; row < 16; row++) {
                    int l, w, nib, c;
                    gk_w4_code_pos(row, kk, &l, &w, &nib, &c);
                    EXPECT_EQ(w, step) << "k " << kk;
                    EXPECT_EQ(c, brow) << "k " << kk << ": the code's column differs from the X value's row";
                }
            }
}

// The 16 x 64 codes of a tile's unit fill the 32 lanes x 4 words x 8 nibbles once each, and each
// row's 64 k the 4 steps x 16 columns once each.
TEST(QuantLayout, CodePosIsABijection)
{
    std::set<int> seen;
    for (int row = 0; row < 16; row++) {
        std::set<int> cols;
        for (int kk = 0; kk < 64; kk++) {
            int l, w, nib, c;
            gk_w4_code_pos(row, kk, &l, &w, &nib, &c);
            ASSERT_GE(l, 0);
            ASSERT_LT(l, 32);
            ASSERT_GE(w, 0);
            ASSERT_LT(w, 4);
            ASSERT_GE(nib, 0);
            ASSERT_LT(nib, 8);
            ASSERT_GE(c, 0);
            ASSERT_LT(c, 16);
            EXPECT_TRUE(seen.insert((l * 4 + w) * 8 + nib).second) << "row " << row << " k " << kk;
            EXPECT_TRUE(cols.insert(w * 16 + c).second) << "row " << row << " k " << kk;
            EXPECT_EQ(gk_qref_k_of(w, c), kk);
            int sr = -1, sk = -1; // gk_w4_code_src, the prepack's map, is the inverse
            gk_w4_code_src(l, w, nib, &sr, &sk);
            EXPECT_EQ(sr, row) << "lane " << l << " word " << w << " nibble " << nib;
            EXPECT_EQ(sk, kk) << "lane " << l << " word " << w << " nibble " << nib;
        }
        EXPECT_EQ(cols.size(), 64u);
    }
    EXPECT_EQ(seen.size(), 1024u);
}

// The manual's examples: lane 4 i + j holds rows i and i + 8, and for step s the k
// 32 (s / 2) + 8 j + 4 (s % 2) + 0..3 (fragment columns 2j, 2j + 1, 2j + 8, 2j + 9); a lane's 16
// codes of a row are two runs of 8 contiguous k, 32 apart.
TEST(QuantLayout, CodePosByHand)
{
    int l, w, nib, c;
    gk_w4_code_pos(0, 0, &l, &w, &nib, &c);
    EXPECT_EQ(l, 0); EXPECT_EQ(w, 0); EXPECT_EQ(nib, 0); EXPECT_EQ(c, 0);
    gk_w4_code_pos(0, 1, &l, &w, &nib, &c); // odd k: the high half of register 0
    EXPECT_EQ(l, 0); EXPECT_EQ(w, 0); EXPECT_EQ(nib, 4); EXPECT_EQ(c, 1);
    gk_w4_code_pos(0, 2, &l, &w, &nib, &c); // k 2: column 8, register 2
    EXPECT_EQ(l, 0); EXPECT_EQ(w, 0); EXPECT_EQ(nib, 2); EXPECT_EQ(c, 8);
    gk_w4_code_pos(0, 4, &l, &w, &nib, &c); // k 4: step 1
    EXPECT_EQ(l, 0); EXPECT_EQ(w, 1); EXPECT_EQ(nib, 0); EXPECT_EQ(c, 0);
    gk_w4_code_pos(9, 3, &l, &w, &nib, &c); // row i + 8 with i = 1, k 3: register 3, high half
    EXPECT_EQ(l, 4); EXPECT_EQ(w, 0); EXPECT_EQ(nib, 7); EXPECT_EQ(c, 9);
    gk_w4_code_pos(7, 46, &l, &w, &nib, &c); // k 32 + 8 + 4 + 2: j = 1, step 3, column 2j + 8
    EXPECT_EQ(l, 29); EXPECT_EQ(w, 3); EXPECT_EQ(nib, 2); EXPECT_EQ(c, 10);
    gk_w4_code_pos(15, 63, &l, &w, &nib, &c); // the last: lane 31, step 3, register 3, high half
    EXPECT_EQ(l, 31); EXPECT_EQ(w, 3); EXPECT_EQ(nib, 7); EXPECT_EQ(c, 15);
    gk_w4_code_pos(3, 16, &l, &w, &nib, &c); // k 16: lane j = 2, step 0
    EXPECT_EQ(l, 14); EXPECT_EQ(w, 0); EXPECT_EQ(nib, 0); EXPECT_EQ(c, 4);
    gk_w4_code_pos(3, 36, &l, &w, &nib, &c); // k 32 + 4: lane j = 0, step 3 (steps 2-3 hold k 32-63)
    EXPECT_EQ(l, 12); EXPECT_EQ(w, 3); EXPECT_EQ(nib, 0); EXPECT_EQ(c, 0);
}

// The fused kernel's work split: gk_w4_start cuts [0, total) into one contiguous range a warp at
// multiples of chunk, in order, none empty while warps <= total / chunk, their lengths within one
// chunk of each other; gk_w4_warp_of(x) is the warp whose range holds x.
TEST(QuantSchedule, RangesPartitionTheWork)
{
    int checked = 0;
    for (int64_t units : {1, 3, 65})
        for (int64_t pairs : {1, 2, 7, 39, 1000})
            for (int mode = 0; mode < 3; mode++) { // chunk 1, whole pairs, whole groups of two units (lean)
                const int64_t total = pairs * units, chunk = mode == 0 ? 1 : mode == 1 ? units : 2, chunks = total / chunk;
                if (total % chunk) continue;
                for (int64_t warps : {(int64_t)1, (int64_t)2, (int64_t)3, (int64_t)7, (int64_t)64, (int64_t)528, chunks}) {
                    if (warps > chunks) continue;
                    int64_t lo = INT64_MAX, hi = 0;
                    EXPECT_EQ(gk_w4_start(total, chunk, warps, 0), 0);
                    EXPECT_EQ(gk_w4_start(total, chunk, warps, warps), total);
                    for (int64_t w = 0; w < warps; w++) {
                        const int64_t b = gk_w4_start(total, chunk, warps, w), e = gk_w4_start(total, chunk, warps, w + 1);
                        ASSERT_LT(b, e) << "warp " << w << " of " << warps << ": an empty range";
                        EXPECT_EQ(b % chunk, 0);
                        lo = std::min(lo, e - b);
                        hi = std::max(hi, e - b);
                        for (int64_t x : {b, (b + e) / 2, e - 1})
                            EXPECT_EQ(gk_w4_warp_of(x, total, chunk, warps), w) << "position " << x;
                    }
                    EXPECT_LE(hi - lo, chunk) << "total " << total << " chunk " << chunk << " warps " << warps;
                    checked++;
                }
            }
    EXPECT_GT(checked, 100);
    // every position of a small case
    for (int64_t x = 0; x < 97; x++) {
        const int64_t w = gk_w4_warp_of(x, 97, 1, 10);
        EXPECT_LE(gk_w4_start(97, 1, 10, w), x);
        EXPECT_GT(gk_w4_start(97, 1, 10, w + 1), x);
    }
    // warp_of in double and, past (q + 1) W = 2^52, in 64-bit integers: the same answer
    GkRng rng(0x77a1u);
    for (const int64_t total : {(int64_t)1 << 40, ((int64_t)1 << 44) + 12345})
        for (const int64_t warps : {(int64_t)3, (int64_t)4999, (int64_t)262144})
            for (int r = 0; r < 200; r++) {
                const int64_t x = r < 3 ? (r == 0 ? 0 : r == 1 ? total - 1 : total / 2) : (int64_t)(rng.next() % (uint64_t)total);
                const int64_t w = gk_w4_warp_of(x, total, 1, warps);
                ASSERT_TRUE(w >= 0 && w < warps) << x;
                EXPECT_LE(gk_w4_start(total, 1, warps, w), x) << "total " << total << " warps " << warps << " x " << x;
                EXPECT_GT(gk_w4_start(total, 1, warps, w + 1), x) << "total " << total << " warps " << warps << " x " << x;
            }
}

// AWQ packs columns {0, 2, 4, 6, 1, 3, 5, 7} in nibbles 0..7.
TEST(QuantLayout, AwqNibble)
{
    std::set<int> seen;
    for (int e = 0; e < 8; e++) {
        EXPECT_EQ(gk_w4_awq_nibble(kGkQrefAwqOrder[e]), e) << "column " << kGkQrefAwqOrder[e];
        seen.insert(gk_w4_awq_nibble(e));
    }
    EXPECT_EQ(seen.size(), 8u);
    EXPECT_EQ(gk_w4_awq_nibble(0), 0);
    EXPECT_EQ(gk_w4_awq_nibble(1), 4);
    EXPECT_EQ(gk_w4_awq_nibble(2), 1);
    EXPECT_EQ(gk_w4_awq_nibble(7), 7);
}

// ------------------------------------------------------------------ sizes, ledger, configurations

static int64_t manual_packed_bytes(int64_t n, int64_t k, int64_t g, int zm)
{
    const int64_t tiles = (n + 15) / 16;
    const int64_t codes = tiles * 16 * k / 2;
    int64_t rec = tiles * (k / g) * 16 * 2;
    rec = (rec + 255) / 256 * 256;
    return codes + rec * (zm == GK_W4_SYMMETRIC ? 1 : 2);
}

TEST(QuantSizes, PackedBytesFormula)
{
    int checked = 0;
    for (int64_t n : {8, 16, 24, 40, 200, 1000, 1032, 4104, 11008})
        for (int64_t k : {64, 128, 192, 4096, 4160, 11008 / 64 * 64})
            for (int64_t g : {(int64_t)32, (int64_t)64, (int64_t)128, k})
                for (int zm : {GK_W4_SYMMETRIC, GK_W4_ZEROS_INT4, GK_W4_ZEROS_FLOAT}) {
                    if (k % g) continue;
                    const size_t got = gk_w4_packed_bytes(n, k, (int)g, zm);
                    EXPECT_EQ((int64_t)got, manual_packed_bytes(n, k, g, zm)) << n << " x " << k << " group " << g
                                                                                << " mode " << zm;
                    EXPECT_EQ((int64_t)got, gk_qref_packed_bytes(n, k, (int)g, zm));
                    EXPECT_STREQ(gk_failure_reason(), "");
                    checked++;
                }
    EXPECT_GT(checked, 300);
    // by hand: one tile of 64 k: 512 bytes of codes, 32 of records rounded to 256
    EXPECT_EQ(gk_w4_packed_bytes(8, 64, 64, GK_W4_SYMMETRIC), 768u);
    EXPECT_EQ(gk_w4_packed_bytes(8, 64, 64, GK_W4_ZEROS_INT4), 1024u);
    EXPECT_EQ(gk_w4_packed_bytes(8, 64, 32, GK_W4_ZEROS_FLOAT), 1024u);
    // Llama's 11008 x 4096, group 128: 688 tiles, 22544384 code bytes, 704512 of records
    EXPECT_EQ(gk_w4_packed_bytes(11008, 4096, 128, GK_W4_SYMMETRIC), 22544384u + 704512u);
    EXPECT_EQ(gk_w4_packed_bytes(11008, 4096, 128, GK_W4_ZEROS_INT4), 22544384u + 2 * 704512u);
    // N not a multiple of 16: the last tile is whole
    EXPECT_EQ(gk_w4_packed_bytes(24, 128, 128, GK_W4_SYMMETRIC), 2u * 16 * 64 + 256);
}

struct ShapeCase {
    int64_t n, k;
    int group, zero_mode;
    const char *needle; // what the reason must hold
};

// Shapes every entry point refuses (the reason names the argument).
static const ShapeCase kBadShapes[] = {
    {0, 192, 64, GK_W4_ZEROS_INT4, "'n' is 0"},
    {-8, 192, 64, GK_W4_ZEROS_INT4, "'n' is -8"},
    {12, 192, 64, GK_W4_ZEROS_INT4, "n = 12 is not a multiple of 8"},
    {204, 192, 64, GK_W4_ZEROS_INT4, "n = 204"},
    {200, 0, 64, GK_W4_ZEROS_INT4, "'k' is 0"},
    {200, -64, 64, GK_W4_ZEROS_INT4, "'k' is -64"},
    {200, 100, 64, GK_W4_ZEROS_INT4, "k = 100 is not a multiple of 64"},
    {200, 32, 32, GK_W4_ZEROS_INT4, "k = 32 is not a multiple of 64"},
    {200, 192, 16, GK_W4_ZEROS_INT4, "group = 16"},
    {200, 192, 96, GK_W4_ZEROS_INT4, "group = 96"},
    {200, 512, 256, GK_W4_ZEROS_INT4, "group = 256"},
    {200, 192, 0, GK_W4_ZEROS_INT4, "group = 0"},
    {200, 192, -64, GK_W4_ZEROS_INT4, "group = -64"},
    {200, 192, 64, 3, "zero_mode 3"},
    {200, 192, 64, -1, "zero_mode -1"},
    {200, (int64_t)1 << 32, 64, GK_W4_ZEROS_INT4, "'k'"},
    {(int64_t)1 << 31, 64, 64, GK_W4_ZEROS_INT4, "'n'"},
};

// k must be a multiple of the group (the manual: "k not a positive multiple of 64 and of the
// group" is refused): 192 and 4160 are not multiples of 128.
static const ShapeCase kGroupNotDividingK[] = {
    {200, 192, 128, GK_W4_ZEROS_INT4, "group"},
    {200, 4160, 128, GK_W4_SYMMETRIC, "group"},
};

TEST(QuantSizes, PackedBytesRefusals)
{
    for (const ShapeCase &s : kBadShapes) {
        EXPECT_EQ(gk_w4_packed_bytes(s.n, s.k, s.group, s.zero_mode), 0u) << s.needle;
        const std::string r = gk_failure_reason();
        EXPECT_TRUE(has(r, s.needle)) << "reason \"" << r << "\", want \"" << s.needle << "\"";
        EXPECT_EQ(r.rfind("gk_w4_packed_bytes: ", 0), 0u) << r;
    }
    // n x k past the 32-bit indexing of the 16-byte lanes: 2^31 lanes are 2^35 bytes
    EXPECT_EQ(gk_w4_packed_bytes((int64_t)1 << 20, (int64_t)1 << 16, 64, GK_W4_SYMMETRIC), 0u);
    EXPECT_TRUE(has(gk_failure_reason(), "32-bit")) << gk_failure_reason();
    // group == k of any multiple of 64 is one group a channel
    EXPECT_EQ(gk_w4_packed_bytes(8, 256, 256, GK_W4_SYMMETRIC), (size_t)manual_packed_bytes(8, 256, 256, 0));
    EXPECT_EQ(gk_w4_packed_bytes(8, 4160, 4160, GK_W4_ZEROS_FLOAT), (size_t)manual_packed_bytes(8, 4160, 4160, 2));
    EXPECT_STREQ(gk_failure_reason(), "");
}

TEST(QuantSizes, PackedBytesRefusesAGroupThatDoesNotDivideK)
{
    for (const ShapeCase &s : kGroupNotDividingK) {
        EXPECT_EQ(gk_w4_packed_bytes(s.n, s.k, s.group, s.zero_mode), 0u)
            << "k = " << s.k << ", group = " << s.group << " accepted";
        EXPECT_TRUE(has(gk_failure_reason(), s.needle)) << gk_failure_reason();
    }
}

TEST(QuantLedger, Arithmetic)
{
    for (int zm : {GK_W4_SYMMETRIC, GK_W4_ZEROS_INT4, GK_W4_ZEROS_FLOAT})
        for (int xdt : {GK_BF16, GK_F16})
            for (int ddt : {GK_BF16, GK_F16, GK_F32})
                for (int bias : {0, 1})
                    for (auto mnkg : {std::make_tuple(1, 11008, 4096, 128), std::make_tuple(17, 200, 192, 64),
                                      std::make_tuple(1000, 8, 4160, 4160), std::make_tuple(3, 1032, 64, 32)}) {
                        const int64_t m = std::get<0>(mnkg), n = std::get<1>(mnkg), k = std::get<2>(mnkg);
                        const int g = std::get<3>(mnkg);
                        const gk_ledger l = gk_w4_ledger(m, n, k, g, zm, xdt, ddt, bias);
                        EXPECT_EQ(l.flops, 2.0 * m * n * k);
                        const double records = (double)(k / g) * n * 2 * (zm == GK_W4_SYMMETRIC ? 1 : 2);
                        const double want = (double)n * k / 2 + records + (double)m * k * 2 +
                                            (double)m * n * (ddt == GK_F32 ? 4 : 2) + (bias ? 4.0 * n : 0.0);
                        EXPECT_EQ(l.bytes, want) << m << " x " << n << " x " << k << " group " << g << " mode " << zm;
                    }
    // by hand: 1 x 8 x 64, group 64, symmetric, bf16 in and out, no bias:
    // 256 code bytes + 16 scale bytes + 128 of X + 16 of D
    const gk_ledger l = gk_w4_ledger(1, 8, 64, 64, GK_W4_SYMMETRIC, GK_BF16, GK_BF16, 0);
    EXPECT_EQ(l.flops, 1024.0);
    EXPECT_EQ(l.bytes, 416.0);
}

TEST(QuantConfigs, Info)
{
    const int count = gk_w4_config_count();
    ASSERT_GE(count, 1);
    std::set<std::string> names;
    for (int c = 0; c < count; c++) {
        const gk_w4_config info = gk_w4_config_info(c);
        ASSERT_NE(info.name, nullptr) << c;
        EXPECT_TRUE(names.insert(info.name).second) << "name " << info.name << " twice";
        EXPECT_GE(info.token_tiles, 1) << info.name;
        EXPECT_GE(info.min_blocks, 1) << info.name;
        EXPECT_LE(info.smem_bytes, 227 * 1024) << info.name;
        const gk_w4_config next = gk_w4_config_info(c + 1);
        if (info.wgmma) { // the wgmma kernels, last: RW / 4 consumer warpgroups and a producer warp, a block a worker
            EXPECT_EQ(info.lean, 0) << info.name;
            EXPECT_TRUE(info.row_tiles == 4 || info.row_tiles == 8 || info.row_tiles == 12) << info.name;
            EXPECT_EQ(info.threads, info.row_tiles * 32 + 32) << info.name;
            EXPECT_EQ(info.warps, 1) << info.name;
            EXPECT_LE(info.token_tiles, 16) << info.name;
            EXPECT_GE(info.prefetch, 2) << info.name;
            // PF stages of X's unit (8 NT rows of 128 bytes) and the RW tiles' codes
            EXPECT_GE(info.smem_bytes, info.prefetch * (info.token_tiles * 8 * 128 + info.row_tiles * 512)) << info.name;
            if (c + 1 < count) EXPECT_TRUE(next.wgmma) << "wgmma configurations come last";
            continue;
        }
        EXPECT_EQ(info.threads, info.warps * 32) << info.name;
        EXPECT_GE(info.row_tiles, 1) << info.name;
        EXPECT_LE(info.row_tiles, 4) << info.name;
        EXPECT_GE(info.warps, 1) << info.name;
        EXPECT_GE(info.prefetch, 2) << info.name;
        EXPECT_LE(info.prefetch, 8) << info.name;
        // the warps' rings: PF RW KB each; the lean decode kernels (after the ring kernels) have none
        if (info.lean) {
            EXPECT_EQ(info.smem_bytes, 0) << info.name;
            EXPECT_EQ(info.row_tiles, 1) << info.name;
            EXPECT_LE(info.token_tiles, 2) << info.name;
            if (c + 1 < count) EXPECT_TRUE(next.lean || next.wgmma) << "lean configurations after the ring kernels";
        } else {
            EXPECT_GE(info.smem_bytes, info.warps * info.prefetch * info.row_tiles * 1024) << info.name;
        }
    }
    for (int bad : {-1, count, count + 1, 1 << 30}) {
        const gk_w4_config info = gk_w4_config_info(bad);
        EXPECT_EQ(info.name, nullptr) << bad;
        EXPECT_EQ(info.threads, 0) << bad;
    }
}

// gk_w4_workspace_bytes asks the current device (as gk_w4_plan_for does) and says 0 on any error:
// for bad shapes, and without a device. (The GPU tests check it against the plans.)
TEST(QuantWorkspace, Bytes)
{
    EXPECT_EQ(gk_w4_workspace_bytes(0, 200, 192), 0u);
    EXPECT_EQ(gk_w4_workspace_bytes(-1, 200, 192), 0u);
    EXPECT_EQ(gk_w4_workspace_bytes(17, 0, 192), 0u);
    EXPECT_EQ(gk_w4_workspace_bytes(17, 200, 0), 0u);
    EXPECT_EQ(gk_w4_workspace_bytes(17, 200, -64), 0u);
    if (no_gpu()) {
        EXPECT_EQ(gk_w4_workspace_bytes(17, 200, 192), 0u);
        EXPECT_EQ(gk_w4_workspace_bytes(GK_W4_DEQUANT_M, 4096, 4096), 0u);
    }
}

// ------------------------------------------------------------------ the reference's packers

static std::vector<uint8_t> random_codes(size_t count, GkRng &rng)
{
    std::vector<uint8_t> v(count);
    for (uint8_t &e : v) e = (uint8_t)(rng.next() >> 60);
    return v;
}

TEST(QuantRef, PackersRoundTrip)
{
    GkRng rng(11);
    for (int64_t n : {8, 24, 40, 200})
        for (int64_t k : {64, 192, 256})
            for (int64_t g : {(int64_t)32, (int64_t)64, k}) {
                const int64_t groups = k / g;
                const std::vector<uint8_t> u = random_codes((size_t)(n * k), rng), z = random_codes((size_t)(groups * n), rng);
                EXPECT_EQ(gk_qref_gptq_qweight_unpack(gk_qref_gptq_qweight(u, n, k), n, k), u);
                EXPECT_EQ(gk_qref_awq_qweight_unpack(gk_qref_awq_qweight(u, n, k), n, k), u);
                for (int off : {0, 1})
                    EXPECT_EQ(gk_qref_gptq_qzeros_unpack(gk_qref_gptq_qzeros(z, groups, n, off), groups, n, off), z);
                EXPECT_EQ(gk_qref_awq_qzeros_unpack(gk_qref_awq_qzeros(z, groups, n), groups, n), z);
                for (int sym : {0, 1})
                    EXPECT_EQ(gk_qref_canonical_q_unpack(gk_qref_canonical_q(u, n, k, sym), n, k, sym), u);
                EXPECT_EQ(gk_qref_canonical_zeros_unpack(gk_qref_canonical_zeros(z, groups, n), groups, n), z);
                EXPECT_EQ(gk_qref_gptq_qweight(u, n, k).size(), (size_t)(k / 8 * n));
                EXPECT_EQ(gk_qref_awq_qweight(u, n, k).size(), (size_t)(k * n / 8));
                EXPECT_EQ(gk_qref_canonical_q(u, n, k, 0).size(), (size_t)(n * k / 2));
                EXPECT_EQ(gk_qref_canonical_zeros(z, groups, n).size(), (size_t)(groups * n / 2));
            }
}

// Hand-built words of each packing.
TEST(QuantRef, PackedWordsByHand)
{
    const int64_t n = 8, k = 64, groups = 1;
    std::vector<uint8_t> u((size_t)(n * k), 0), z((size_t)(groups * n), 0);
    for (int e = 0; e < 8; e++) u[(size_t)(0 * k + e)] = (uint8_t)(e + 1); // row 0, k 0..7: codes 1..8
    for (int c = 0; c < 8; c++) u[(size_t)(c * k + 8)] = (uint8_t)(8 + c); // k 8, columns 0..7: 8..15
    for (int c = 0; c < 8; c++) z[(size_t)c] = (uint8_t)c;                // zeros 0..7
    // GPTQ: row i of qweight holds k 8 i + e in bits 4 e
    const std::vector<int32_t> gw = gk_qref_gptq_qweight(u, n, k);
    EXPECT_EQ((uint32_t)gw[0 * n + 0], 0x87654321u);
    for (int c = 0; c < 8; c++) EXPECT_EQ((uint32_t)gw[1 * n + c], (uint32_t)(8 + c)) << c; // k 8: nibble 0 of row 1
    // GPTQ zeros: column 8 j + e in bits 4 e, storing z - offset mod 16 (z = 0 with offset 1: 15)
    EXPECT_EQ((uint32_t)gk_qref_gptq_qzeros(z, groups, n, 0)[0], 0x76543210u);
    EXPECT_EQ((uint32_t)gk_qref_gptq_qzeros(z, groups, n, 1)[0], 0x6543210Fu);
    // AWQ: nibble e of word (k, j) holds column 8 j + {0, 2, 4, 6, 1, 3, 5, 7}[e]
    const std::vector<int32_t> aw = gk_qref_awq_qweight(u, n, k);
    EXPECT_EQ((uint32_t)aw[8 * (n / 8) + 0], 0xFDB9ECA8u); // columns 0..7 hold 8..15
    EXPECT_EQ((uint32_t)aw[0], 0x00000001u);               // k 0: only row (column) 0 is nonzero: 1
    EXPECT_EQ((uint32_t)gk_qref_awq_qzeros(z, groups, n)[0], 0x75316420u);
    // canonical: k even in the low nibble; symmetric codes u - 8 as two's complement
    const std::vector<uint8_t> q = gk_qref_canonical_q(u, n, k, 0), qs = gk_qref_canonical_q(u, n, k, 1);
    EXPECT_EQ(q[0], 0x21);  // k 0, 1 of row 0: codes 1, 2
    EXPECT_EQ(q[3], 0x87);  // k 6, 7: codes 7, 8
    EXPECT_EQ(qs[0], 0xA9); // 1 - 8 = -7 (0x9), 2 - 8 = -6 (0xA)
    EXPECT_EQ(qs[3], 0x0F); // 7 - 8 = -1 (0xF), 8 - 8 = 0
    EXPECT_EQ(qs[1 * k / 2 + 4], 0x81); // row 1, k 8: 9 - 8 = 1; k 9: 0 - 8 = -8 (0x8)
    const std::vector<uint8_t> zb = gk_qref_canonical_zeros(z, groups, n);
    EXPECT_EQ(zb[0], 0x10);
    EXPECT_EQ(zb[3], 0x76);
    EXPECT_EQ(gk_qref_s4(0x8), -8);
    EXPECT_EQ(gk_qref_s4(0x7), 7);
    EXPECT_EQ(gk_qref_to_nib(-1), 15u);
}

// The rounding helpers against known codes.
TEST(QuantRef, Rounding)
{
    EXPECT_EQ(gk_qref_encode(1.0f, GK_BF16), 0x3f80u);
    EXPECT_EQ(gk_qref_encode(1.0f, GK_F16), 0x3c00u);
    EXPECT_EQ(gk_qref_encode(1.0f + 0x1p-8f, GK_BF16), 0x3f80u);              // the tie to even: down
    EXPECT_EQ(gk_qref_encode(1.0f + 0x1p-8f + 0x1p-10f, GK_BF16), 0x3f81u);   // past it: up
    EXPECT_EQ(gk_qref_encode(1.0f + 0x1p-7f + 0x1p-8f, GK_BF16), 0x3f82u);    // the tie to even: up
    EXPECT_EQ(gk_qref_decode(0x3f81u, GK_BF16), 1.0078125f);
    EXPECT_EQ(gk_qref_round(0.1f, GK_BF16), 0.10009765625f);
    EXPECT_EQ(gk_qref_round(0.1f, GK_F16), 0.0999755859375f);
    EXPECT_EQ(gk_qref_round(0.1f, GK_F32), 0.1f);
}

static GkQRefWeight one_value(int zm, int dt, int sdt, unsigned u, unsigned zi, float s, float zf)
{
    GkQRefWeight w;
    w.n = 8;
    w.k = 64;
    w.group = 64;
    w.zero_mode = zm;
    w.dtype = dt;
    w.scale_dtype = sdt;
    w.u.assign(8 * 64, (uint8_t)u);
    w.zi.assign(8, (uint8_t)zi);
    w.s_bits.assign(8, gk_qref_encode(s, sdt));
    w.z_bits.assign(8, gk_qref_encode(zf, sdt));
    return w;
}

// Dequantized values computed by hand.
TEST(QuantRef, DequantByHand)
{
    // symmetric: (3 - 8) 0.5 = -2.5, exact everywhere
    GkQRefWeight w = one_value(GK_W4_SYMMETRIC, GK_BF16, GK_F32, 3, 0, 0.5f, 0);
    EXPECT_EQ(gk_qref_weight(w, 0, 0), -2.5);
    EXPECT_EQ(gk_qref_dequant_value(w, 7, 63), -2.5f);
    // 4-bit zero point 0, code 15, scale 1 + 2^-8 + 2^-10 in fp32: bf16 rounds the scale up to
    // 1 + 2^-7; 15 (1 + 2^-7) = 15.1171875; the stored bf16 (spacing 1/16 at 15) is 15.125
    w = one_value(GK_W4_ZEROS_INT4, GK_BF16, GK_F32, 15, 0, 1.0f + 0x1p-8f + 0x1p-10f, 0);
    EXPECT_EQ(w.scale_d(0, 0), 1.0078125f);
    EXPECT_EQ(gk_qref_weight(w, 3, 5), 15.1171875);
    EXPECT_EQ(gk_qref_dequant_value(w, 3, 5), 15.125f);
    EXPECT_EQ(gk_qref_dequant_bits(w, 3, 5), 0x4172u);
    // the same in f16: the scale is exact (1 + 2^-8 + 2^-10); 15 s = 15.0732421875; f16's spacing
    // at 15 is 2^-7: 1929.375 steps, stored 15.0703125
    w = one_value(GK_W4_ZEROS_INT4, GK_F16, GK_F32, 15, 0, 1.0f + 0x1p-8f + 0x1p-10f, 0);
    EXPECT_EQ(w.scale_d(0, 0), 1.0f + 0x1p-8f + 0x1p-10f);
    EXPECT_EQ(gk_qref_weight(w, 0, 0), 15.0732421875);
    EXPECT_EQ(gk_qref_dequant_value(w, 0, 0), 15.0703125f);
    // a 4-bit zero point: (2 - 13) 0.25 = -2.75
    w = one_value(GK_W4_ZEROS_INT4, GK_F16, GK_BF16, 2, 13, 0.25f, 0);
    EXPECT_EQ(gk_qref_weight(w, 1, 1), -2.75);
    EXPECT_EQ(gk_qref_dequant_bits(w, 1, 1), 0xC180u); // f16 -2.75
    // float zero points: u s - z s with s = 0.5, z = 3, u = 5: 2.5 - 1.5 = 1
    w = one_value(GK_W4_ZEROS_FLOAT, GK_BF16, GK_BF16, 5, 0, 0.5f, 3.0f);
    EXPECT_EQ(w.zneg(0, 0), -1.5f);
    EXPECT_EQ(gk_qref_weight(w, 0, 0), 1.0);
    EXPECT_EQ(gk_qref_dequant_value(w, 0, 0), 1.0f);
    // float zero points where zneg rounds: s = 1 + 2^-7, z = 3: z s = 3.0234375 is a tie between
    // bf16 3.015625 and 3.03125 (spacing 2^-6), to even: 3.03125. u = 3: u s + zneg = -2^-7, not 0
    w = one_value(GK_W4_ZEROS_FLOAT, GK_BF16, GK_BF16, 3, 0, 1.0078125f, 3.0f);
    EXPECT_EQ(w.zneg(0, 0), -3.03125f);
    EXPECT_EQ(gk_qref_weight(w, 0, 0), -0.0078125);
    EXPECT_EQ(gk_qref_dequant_value(w, 0, 0), -0.0078125f);
    // f16 holds z s = 3.0234375 exactly: u s + zneg = 0
    w = one_value(GK_W4_ZEROS_FLOAT, GK_F16, GK_BF16, 3, 0, 1.0078125f, 3.0f);
    EXPECT_EQ(w.zneg(0, 0), -3.0234375f);
    EXPECT_EQ(gk_qref_dequant_value(w, 0, 0), 0.0f);
    // f16 scales into bf16 activations: 0.1 in f16 (0.0999755859375) rounds to bf16 0.10009765625
    w = one_value(GK_W4_SYMMETRIC, GK_BF16, GK_F16, 9, 0, 0.1f, 0);
    EXPECT_EQ(w.scale_d(0, 0), 0.10009765625f);
    EXPECT_EQ(gk_qref_weight(w, 0, 0), 0.10009765625);
}

// The reference's prepacked form on a hand-built weight: where given codes and records land.
TEST(QuantRef, PrepackByHand)
{
    GkQRefWeight w = one_value(GK_W4_ZEROS_INT4, GK_BF16, GK_BF16, 0, 0, 1.0f, 0);
    w.n = 24; // two tiles, the second half empty
    w.k = 128;
    w.group = 64;
    w.u.assign((size_t)(24 * 128), 0);
    w.zi.assign(2 * 24, 0);
    w.s_bits.assign(2 * 24, gk_qref_encode(1.0f, GK_BF16));
    w.u[(size_t)(9 * 128 + 64 + 3)] = 7;   // tile 0, unit 1, row 9, k 3: lane 4, word 0, nibble 7
    w.u[(size_t)(17 * 128 + 127)] = 11;    // tile 1, unit 1, row 1, k 63: lane 7, word 3, nibble 6
    w.zi[(size_t)(1 * 24 + 18)] = 5;       // group 1, row 18: tile 1, i 2, h 0
    w.s_bits[(size_t)(0 * 24 + 15)] = gk_qref_encode(2.0f, GK_BF16); // group 0, row 15: tile 0, i 7, h 1
    std::vector<uint8_t> b, def;
    gk_qref_prepack(w, &b, &def);
    ASSERT_EQ((int64_t)b.size(), manual_packed_bytes(24, 128, 64, GK_W4_ZEROS_INT4));
    const int64_t units = 2;
    auto word = [&](int64_t off) { uint32_t v; memcpy(&v, &b[(size_t)off], 4); return v; };
    EXPECT_EQ(word(((0 * units + 1) * 32 + 4) * 16 + 0), 7u << 28);
    EXPECT_EQ(word(((1 * units + 1) * 32 + 7) * 16 + 12), 11u << 24);
    const int64_t cb = 2 * 16 * 64, rb = 256;
    // scale of group 0, row 15: record (tile 0, group 0, i 7), high half
    EXPECT_EQ(b[(size_t)(cb + ((0 * 2 + 0) * 16 + 7 * 2 + 1) * 2 + 1)], 0x40); // bf16 2.0 = 0x4000
    // zero of group 1, row 18: 128 + 5 = bf16 0x4305
    const int64_t zo = cb + rb + ((1 * 2 + 1) * 16 + 2 * 2 + 0) * 2;
    EXPECT_EQ(b[(size_t)zo], 0x05);
    EXPECT_EQ(b[(size_t)zo + 1], 0x43);
    // rows past N (tile 1, rows 24..31): codes zero and defined, records undefined
    EXPECT_EQ(def[(size_t)(cb + ((1 * 2 + 0) * 16 + 0 * 2 + 1) * 2)], 0); // row 16 + 8 = 24
    EXPECT_EQ(def[(size_t)(cb + ((1 * 2 + 0) * 16 + 7 * 2 + 0) * 2)], 1); // row 16 + 7 = 23
    int64_t nonzero = 0;
    for (int64_t i = 0; i < cb; i++) nonzero += b[(size_t)i] != 0;
    EXPECT_EQ(nonzero, 2);
}

// ------------------------------------------------------------------ validation: shared helpers

// The reason starts with the public name and holds the needle.
static void expect_refused(cudaError_t e, const char *fn, const std::string &needle, const std::string &what)
{
    EXPECT_EQ(e, cudaErrorInvalidValue) << fn << ": " << what;
    const std::string r = gk_failure_reason();
    EXPECT_TRUE(has(r, needle)) << fn << ": " << what << ": reason \"" << r << "\", want \"" << needle << "\"";
    EXPECT_EQ(r.rfind(std::string(fn) + ": ", 0), 0u) << what << ": reason \"" << r << "\"";
}

// Every argument passed: the call went as far as the CUDA runtime (only where there is no GPU).
static void expect_accepted(cudaError_t e, const char *fn, const std::string &what)
{
    if (!no_gpu()) return; // a GPU host would launch on the fake addresses
    const std::string r = gk_failure_reason();
    EXPECT_NE(e, cudaErrorInvalidValue) << fn << ": " << what << " refused: " << r;
    EXPECT_NE(e, cudaSuccess) << fn << ": " << what << ": succeeded without a GPU?";
    EXPECT_EQ(r.rfind(std::string(fn) + ": ", 0), 0u) << "the CUDA error is named after the call: \"" << r << "\"";
}

// ------------------------------------------------------------------ validation: prepack

struct PrepackArgs {
    void *packed = kFake;
    int dtype = GK_BF16;
    const gk_int4x2 *q = (const gk_int4x2 *)(kFake + 64 * kMB);
    const void *scales = kFake + 128 * kMB;
    int scale_dtype = GK_F16;
    const void *zeros = kFake + 192 * kMB;
    int64_t n = 200, k = 192;
    int group = 64, zero_mode = GK_W4_ZEROS_INT4;
    cudaError_t call() const
    {
        return gk_w4_prepack(packed, dtype, q, scales, scale_dtype, zeros, n, k, group, zero_mode, 0);
    }
    int64_t packed_bytes() const { return manual_packed_bytes(n, k, group, zero_mode); }
};

TEST(QuantValidation, PrepackAccepted)
{
    const char *fn = "gk_w4_prepack";
    PrepackArgs a;
    expect_accepted(a.call(), fn, "the valid arguments");
    for (int zm : {GK_W4_ZEROS_INT4, GK_W4_ZEROS_FLOAT})
        for (int dt : {GK_BF16, GK_F16})
            for (int sdt : {GK_BF16, GK_F16, GK_F32}) {
                a = PrepackArgs();
                a.zero_mode = zm;
                a.dtype = dt;
                a.scale_dtype = sdt;
                expect_accepted(a.call(), fn, "mode " + std::to_string(zm) + " dtype " + std::to_string(dt));
            }
    a = PrepackArgs(); a.zero_mode = GK_W4_SYMMETRIC; a.zeros = nullptr; expect_accepted(a.call(), fn, "symmetric");
    a = PrepackArgs(); a.q = (const gk_int4x2 *)((char *)a.packed + a.packed_bytes()); expect_accepted(a.call(), fn, "q right after packed");
    a = PrepackArgs(); a.q = (const gk_int4x2 *)((char *)a.packed - a.n * a.k / 2); expect_accepted(a.call(), fn, "q right before packed");
    a = PrepackArgs(); a.q = (const gk_int4x2 *)(kFake + 64 * kMB + 1); expect_accepted(a.call(), fn, "q at an odd byte");
    a = PrepackArgs(); a.zeros = kFake + 192 * kMB + 1; expect_accepted(a.call(), fn, "4-bit zeros at an odd byte");
    a = PrepackArgs(); a.group = 192; expect_accepted(a.call(), fn, "group = k");
    a = PrepackArgs(); a.group = 32; expect_accepted(a.call(), fn, "group 32");
    a = PrepackArgs(); a.n = 8; a.k = 64; expect_accepted(a.call(), fn, "8 x 64");
}

TEST(QuantValidation, PrepackRefused)
{
    const char *fn = "gk_w4_prepack";
    PrepackArgs a;
    a = PrepackArgs(); a.packed = nullptr; expect_refused(a.call(), fn, "'packed' is a null pointer", "packed NULL");
    a = PrepackArgs(); a.packed = kFake + 128; expect_refused(a.call(), fn, "packed is not 256-byte aligned", "packed + 128");
    a = PrepackArgs(); a.packed = kFake + 16; expect_refused(a.call(), fn, "packed is not 256-byte aligned", "packed + 16");
    a = PrepackArgs(); a.q = nullptr; expect_refused(a.call(), fn, "'q' is a null pointer", "q NULL");
    a = PrepackArgs(); a.scales = nullptr; expect_refused(a.call(), fn, "'scales' is a null pointer", "scales NULL");
    a = PrepackArgs(); a.zeros = nullptr; expect_refused(a.call(), fn, "'zeros' is a null pointer", "4-bit zeros NULL");
    a = PrepackArgs(); a.zeros = nullptr; a.zero_mode = GK_W4_ZEROS_FLOAT;
    expect_refused(a.call(), fn, "'zeros' is a null pointer", "float zeros NULL");
    a = PrepackArgs(); a.zero_mode = GK_W4_SYMMETRIC;
    expect_refused(a.call(), fn, "zeros is given but zero_mode is GK_W4_SYMMETRIC", "symmetric with zeros");
    a = PrepackArgs(); a.dtype = GK_F32; expect_refused(a.call(), fn, "dtype 0 is not GK_BF16 or GK_F16", "dtype f32");
    a = PrepackArgs(); a.dtype = GK_E4M3; expect_refused(a.call(), fn, "dtype 3", "dtype e4m3");
    a = PrepackArgs(); a.scale_dtype = GK_E4M3; expect_refused(a.call(), fn, "scale_dtype 3", "scale_dtype e4m3");
    a = PrepackArgs(); a.scale_dtype = 7; expect_refused(a.call(), fn, "scale_dtype 7", "scale_dtype 7");
    a = PrepackArgs(); a.scales = kFake + 128 * kMB + 1; expect_refused(a.call(), fn, "'scales'", "f16 scales at an odd byte");
    a = PrepackArgs(); a.scale_dtype = GK_F32; a.scales = kFake + 128 * kMB + 2;
    expect_refused(a.call(), fn, "'scales'", "f32 scales at 2 bytes");
    a = PrepackArgs(); a.zero_mode = GK_W4_ZEROS_FLOAT; a.scale_dtype = GK_F32; a.zeros = kFake + 192 * kMB + 2;
    expect_refused(a.call(), fn, "'zeros'", "f32 float zeros at 2 bytes");
    // overlaps with the output (its size the manual's)
    a = PrepackArgs(); a.q = (const gk_int4x2 *)((char *)a.packed + a.packed_bytes() - 1);
    expect_refused(a.call(), fn, "'packed' and 'q' overlap", "q in packed's last byte");
    a = PrepackArgs(); a.q = (const gk_int4x2 *)((char *)a.packed - a.n * a.k / 2 + 1);
    expect_refused(a.call(), fn, "'packed' and 'q' overlap", "q ending in packed's first byte");
    a = PrepackArgs(); a.scales = (char *)a.packed + 512; expect_refused(a.call(), fn, "'packed' and 'scales' overlap", "scales in packed");
    a = PrepackArgs(); a.zeros = (char *)a.packed + a.packed_bytes() - 1;
    expect_refused(a.call(), fn, "'packed' and 'zeros' overlap", "zeros in packed");
    for (const ShapeCase &s : kBadShapes) {
        a = PrepackArgs(); a.n = s.n; a.k = s.k; a.group = s.group; a.zero_mode = s.zero_mode;
        expect_refused(a.call(), fn, s.needle, s.needle);
    }
}

TEST(QuantValidation, PrepackRefusesAGroupThatDoesNotDivideK)
{
    for (const ShapeCase &s : kGroupNotDividingK) {
        PrepackArgs a; a.n = s.n; a.k = s.k; a.group = s.group; a.zero_mode = s.zero_mode;
        if (s.zero_mode == GK_W4_SYMMETRIC) a.zeros = nullptr;
        expect_refused(a.call(), "gk_w4_prepack", s.needle, "k " + std::to_string(s.k) + ", group " + std::to_string(s.group));
    }
}

// ------------------------------------------------------------------ validation: GPTQ, AWQ

struct ConvertArgs {
    gk_int4x2 *q = (gk_int4x2 *)kFake;
    gk_int4x2 *zeros = (gk_int4x2 *)(kFake + 64 * kMB);
    const int32_t *qweight = (const int32_t *)(kFake + 128 * kMB);
    const int32_t *qzeros = (const int32_t *)(kFake + 192 * kMB);
    const int32_t *g_idx = nullptr;
    int64_t n = 200, k = 192;
    int group = 64, zero_offset = 1;
    cudaError_t gptq() const { return gk_w4_from_gptq(q, zeros, qweight, qzeros, g_idx, n, k, group, zero_offset, 0); }
    cudaError_t awq() const { return gk_w4_from_awq(q, zeros, qweight, qzeros, n, k, group, 0); }
};

TEST(QuantValidation, GptqAccepted)
{
    const char *fn = "gk_w4_from_gptq";
    ConvertArgs a;
    expect_accepted(a.gptq(), fn, "the valid arguments");
    a = ConvertArgs(); a.zero_offset = 0; expect_accepted(a.gptq(), fn, "zero_offset 0");
    a = ConvertArgs(); a.qzeros = nullptr; a.zeros = nullptr; expect_accepted(a.gptq(), fn, "symmetric");
    std::vector<int32_t> idx(192);
    for (int i = 0; i < 192; i++) idx[i] = i / 64;
    a = ConvertArgs(); a.g_idx = idx.data(); expect_accepted(a.gptq(), fn, "the identity g_idx");
    a = ConvertArgs(); a.group = 192; std::vector<int32_t> zero(192, 0); a.g_idx = zero.data();
    expect_accepted(a.gptq(), fn, "group = k, g_idx all 0");
    a = ConvertArgs(); a.zeros = (gk_int4x2 *)(kFake + 64 * kMB + 1); expect_accepted(a.gptq(), fn, "zeros at an odd byte");
}

TEST(QuantValidation, GptqRefused)
{
    const char *fn = "gk_w4_from_gptq";
    ConvertArgs a;
    for (int off : {2, -1, 16}) {
        a = ConvertArgs(); a.zero_offset = off;
        expect_refused(a.gptq(), fn, "zero_offset = " + std::to_string(off), "zero_offset " + std::to_string(off));
    }
    // act order: g_idx not k / G
    std::vector<int32_t> idx(192);
    for (int i = 0; i < 192; i++) idx[i] = i / 64;
    std::swap(idx[5], idx[70]);
    a = ConvertArgs(); a.g_idx = idx.data(); expect_refused(a.gptq(), fn, "g_idx[5]", "an act-order g_idx");
    for (int i = 0; i < 192; i++) idx[i] = (191 - i) / 64;
    a = ConvertArgs(); a.g_idx = idx.data(); expect_refused(a.gptq(), fn, "g_idx[0]", "a reversed g_idx");
    for (int i = 0; i < 192; i++) idx[i] = i / 64;
    idx[191] = 3;
    a = ConvertArgs(); a.g_idx = idx.data(); expect_refused(a.gptq(), fn, "g_idx[191]", "g_idx past the groups");
    a = ConvertArgs(); a.q = nullptr; expect_refused(a.gptq(), fn, "'q' is a null pointer", "q NULL");
    a = ConvertArgs(); a.qweight = nullptr; expect_refused(a.gptq(), fn, "'qweight' is a null pointer", "qweight NULL");
    a = ConvertArgs(); a.zeros = nullptr; expect_refused(a.gptq(), fn, "'zeros' is a null pointer", "zeros NULL with qzeros");
    a = ConvertArgs(); a.qzeros = nullptr;
    expect_refused(a.gptq(), fn, "zeros is given without qzeros", "zeros with qzeros NULL");
    a = ConvertArgs(); a.qweight = (const int32_t *)(kFake + 128 * kMB + 2); expect_refused(a.gptq(), fn, "'qweight'", "qweight + 2");
    a = ConvertArgs(); a.qzeros = (const int32_t *)(kFake + 192 * kMB + 2); expect_refused(a.gptq(), fn, "'qzeros'", "qzeros + 2");
    a = ConvertArgs(); a.q = (gk_int4x2 *)(kFake + 128 * kMB + 8); expect_refused(a.gptq(), fn, "'q' and 'qweight' overlap", "q in qweight");
    a = ConvertArgs(); a.zeros = (gk_int4x2 *)(kFake + 192 * kMB + 4);
    expect_refused(a.gptq(), fn, "'zeros' and 'qzeros' overlap", "zeros in qzeros");
    a = ConvertArgs(); a.zeros = (gk_int4x2 *)(kFake + 200 * 192 / 2 - 1);
    expect_refused(a.gptq(), fn, "'zeros' and 'q' overlap", "zeros in q's last byte");
    for (const ShapeCase &s : kBadShapes) {
        if (s.zero_mode != GK_W4_ZEROS_INT4) continue; // the converters take no zero mode
        a = ConvertArgs(); a.n = s.n; a.k = s.k; a.group = s.group;
        expect_refused(a.gptq(), fn, s.needle, s.needle);
    }
}

TEST(QuantValidation, AwqAccepted)
{
    ConvertArgs a;
    expect_accepted(a.awq(), "gk_w4_from_awq", "the valid arguments");
    a = ConvertArgs(); a.group = 32; expect_accepted(a.awq(), "gk_w4_from_awq", "group 32");
    a = ConvertArgs(); a.n = 8; a.k = 64; a.group = 64; expect_accepted(a.awq(), "gk_w4_from_awq", "8 x 64");
}

TEST(QuantValidation, AwqRefused)
{
    const char *fn = "gk_w4_from_awq";
    ConvertArgs a;
    a = ConvertArgs(); a.q = nullptr; expect_refused(a.awq(), fn, "'q' is a null pointer", "q NULL");
    a = ConvertArgs(); a.qweight = nullptr; expect_refused(a.awq(), fn, "'qweight' is a null pointer", "qweight NULL");
    a = ConvertArgs(); a.qzeros = nullptr; expect_refused(a.awq(), fn, "'qzeros' is a null pointer", "qzeros NULL (AWQ has zeros)");
    a = ConvertArgs(); a.zeros = nullptr; expect_refused(a.awq(), fn, "'zeros' is a null pointer", "zeros NULL");
    a = ConvertArgs(); a.qweight = (const int32_t *)(kFake + 128 * kMB + 1); expect_refused(a.awq(), fn, "'qweight'", "qweight + 1");
    a = ConvertArgs(); a.qzeros = (const int32_t *)(kFake + 192 * kMB + 2); expect_refused(a.awq(), fn, "'qzeros'", "qzeros + 2");
    a = ConvertArgs(); a.q = (gk_int4x2 *)(kFake + 128 * kMB - 100); expect_refused(a.awq(), fn, "'q' and 'qweight' overlap", "q into qweight");
    a = ConvertArgs(); a.zeros = (gk_int4x2 *)(kFake + 128 * kMB + 64);
    expect_refused(a.awq(), fn, "'zeros' and 'qweight' overlap", "zeros in qweight");
    for (const ShapeCase &s : kBadShapes) {
        if (s.zero_mode != GK_W4_ZEROS_INT4) continue;
        a = ConvertArgs(); a.n = s.n; a.k = s.k; a.group = s.group;
        expect_refused(a.awq(), fn, s.needle, s.needle);
    }
}

TEST(QuantValidation, ConvertersRefuseAGroupThatDoesNotDivideK)
{
    for (const ShapeCase &s : kGroupNotDividingK) {
        ConvertArgs a; a.n = s.n; a.k = s.k; a.group = s.group;
        const std::string what = "k " + std::to_string(s.k) + ", group " + std::to_string(s.group);
        expect_refused(a.gptq(), "gk_w4_from_gptq", s.needle, what);
        expect_refused(a.awq(), "gk_w4_from_awq", s.needle, what);
    }
}

// ------------------------------------------------------------------ validation: dequant

struct DequantArgs {
    gk_w4_weight w;
    void *dst = kFake + 64 * kMB;
    int64_t lddst = 192;
    bool null_w = false;
    DequantArgs()
    {
        w.packed = kFake;
        w.n = 200;
        w.k = 192;
        w.group = 64;
        w.zero_mode = GK_W4_ZEROS_INT4;
        w.dtype = GK_BF16;
    }
    cudaError_t call() const { return gk_w4_dequant(dst, lddst, null_w ? nullptr : &w, 0); }
};

TEST(QuantValidation, DequantAccepted)
{
    const char *fn = "gk_w4_dequant";
    DequantArgs a;
    expect_accepted(a.call(), fn, "the valid arguments");
    a = DequantArgs(); a.lddst = 195; a.dst = kFake + 64 * kMB + 2; expect_accepted(a.call(), fn, "lddst 195, dst + 2");
    a = DequantArgs(); a.w.dtype = GK_F16; a.w.zero_mode = GK_W4_ZEROS_FLOAT; expect_accepted(a.call(), fn, "f16, float zeros");
    a = DequantArgs(); a.dst = (char *)a.w.packed + manual_packed_bytes(200, 192, 64, 1); expect_accepted(a.call(), fn, "dst right after packed");
}

TEST(QuantValidation, DequantRefused)
{
    const char *fn = "gk_w4_dequant";
    DequantArgs a;
    a = DequantArgs(); a.null_w = true; expect_refused(a.call(), fn, "'w' is a null pointer", "w NULL");
    a = DequantArgs(); a.w.packed = nullptr; expect_refused(a.call(), fn, "'w->packed' is a null pointer", "packed NULL");
    a = DequantArgs(); a.w.packed = kFake + 128; expect_refused(a.call(), fn, "w->packed is not 256-byte aligned", "packed + 128");
    a = DequantArgs(); a.w.dtype = GK_F32; expect_refused(a.call(), fn, "w->dtype 0", "weight dtype f32");
    a = DequantArgs(); a.dst = nullptr; expect_refused(a.call(), fn, "'dst' is a null pointer", "dst NULL");
    a = DequantArgs(); a.dst = kFake + 64 * kMB + 1; expect_refused(a.call(), fn, "'dst'", "dst at an odd byte");
    a = DequantArgs(); a.lddst = 191; expect_refused(a.call(), fn, "lddst = 191 is smaller than k = 192", "lddst < k");
    a = DequantArgs(); a.lddst = (int64_t)1 << 31; expect_refused(a.call(), fn, "'lddst'", "lddst 2^31");
    a = DequantArgs(); a.dst = (char *)a.w.packed + manual_packed_bytes(200, 192, 64, 1) - 2;
    expect_refused(a.call(), fn, "'dst' and 'w->packed' overlap", "dst over packed's last bytes");
    a = DequantArgs(); a.dst = (char *)a.w.packed - 199 * 192 * 2 - 190 * 2;
    expect_refused(a.call(), fn, "'dst' and 'w->packed' overlap", "dst's last row into packed");
    for (const ShapeCase &s : kBadShapes) {
        a = DequantArgs(); a.w.n = s.n; a.w.k = s.k; a.w.group = s.group; a.w.zero_mode = s.zero_mode;
        a.lddst = s.k > 0 ? s.k : 64;
        expect_refused(a.call(), fn, s.needle, s.needle);
    }
}

TEST(QuantValidation, DequantRefusesAGroupThatDoesNotDivideK)
{
    for (const ShapeCase &s : kGroupNotDividingK) {
        DequantArgs a; a.w.n = s.n; a.w.k = s.k; a.w.group = s.group; a.w.zero_mode = s.zero_mode; a.lddst = s.k;
        expect_refused(a.call(), "gk_w4_dequant", s.needle, "k " + std::to_string(s.k) + ", group " + std::to_string(s.group));
    }
}

// ------------------------------------------------------------------ validation: GEMM

struct GemmArgs {
    int config = -1, warps = 0;
    gk_w4_weight w;
    bool null_w = false;
    void *d = kFake + 64 * kMB;
    int d_dtype = GK_BF16;
    int64_t ldd = 200;
    const void *x = kFake + 128 * kMB;
    int64_t ldx = 192;
    const void *c = kFake + 192 * kMB;
    int64_t ldc = 200;
    const float *bias = (const float *)(kFake + 256 * kMB);
    int64_t m = 17;
    float alpha = 1.0f, beta = 0.5f;
    int act = GK_ACT_NONE;
    void *ws = kFake + 320 * kMB;
    size_t ws_bytes = 1 << 20;
    explicit GemmArgs(int dt)
    {
        w.packed = kFake;
        w.n = 200;
        w.k = 192;
        w.group = 64;
        w.zero_mode = GK_W4_ZEROS_INT4;
        w.dtype = dt;
    }
    int64_t packed_bytes() const { return manual_packed_bytes(w.n, w.k, w.group, w.zero_mode); }
};

static cudaError_t gemm_call_bf16(const GemmArgs &a)
{
    return gk_w4_gemm_bf16(a.d, a.d_dtype, a.ldd, (const gk_bf16 *)a.x, a.ldx, a.null_w ? nullptr : &a.w, a.c, a.ldc,
                           a.bias, a.m, a.alpha, a.beta, a.act, a.ws, a.ws_bytes, 0);
}
static cudaError_t gemm_call_f16(const GemmArgs &a)
{
    return gk_w4_gemm_f16(a.d, a.d_dtype, a.ldd, (const gk_f16 *)a.x, a.ldx, a.null_w ? nullptr : &a.w, a.c, a.ldc,
                          a.bias, a.m, a.alpha, a.beta, a.act, a.ws, a.ws_bytes, 0);
}
static cudaError_t gemm_call_ex(const GemmArgs &a)
{
    return gk_w4_gemm_ex(a.config, a.warps, a.d, a.d_dtype, a.ldd, a.x, a.ldx, a.null_w ? nullptr : &a.w, a.c, a.ldc,
                         a.bias, a.m, a.alpha, a.beta, a.act, a.ws, a.ws_bytes, 0);
}

struct GemmCase {
    const char *name;
    cudaError_t (*call)(const GemmArgs &);
    int dtype;
    const char *fn;
};

static const GemmCase kGemmCases[] = {
    {"bf16", gemm_call_bf16, GK_BF16, "gk_w4_gemm_bf16"},
    {"f16", gemm_call_f16, GK_F16, "gk_w4_gemm_f16"},
    {"ex_bf16", gemm_call_ex, GK_BF16, "gk_w4_gemm_ex"},
    {"ex_f16", gemm_call_ex, GK_F16, "gk_w4_gemm_ex"},
};

class QuantGemmValidation : public ::testing::TestWithParam<int> {
  protected:
    const GemmCase &c() const { return kGemmCases[GetParam()]; }
    bool ex() const { return c().call == gemm_call_ex; }
    GemmArgs valid() const { return GemmArgs(c().dtype); }
    void rejected(const GemmArgs &a, const std::string &needle, const std::string &what)
    {
        expect_refused(c().call(a), c().fn, needle, std::string(c().name) + ": " + what);
    }
    void accepted(const GemmArgs &a, const std::string &what)
    {
        expect_accepted(c().call(a), c().fn, std::string(c().name) + ": " + what);
    }
};

TEST_P(QuantGemmValidation, ValidArgumentsPass)
{
    GemmArgs a = valid();
    accepted(a, "the valid arguments");
    for (int zm : {GK_W4_SYMMETRIC, GK_W4_ZEROS_INT4, GK_W4_ZEROS_FLOAT})
        for (int ddt : {GK_BF16, GK_F16, GK_F32})
            for (int act : {GK_ACT_NONE, GK_ACT_RELU, GK_ACT_GELU, GK_ACT_SILU}) {
                a = valid(); a.w.zero_mode = zm; a.d_dtype = ddt; a.act = act;
                accepted(a, "mode " + std::to_string(zm) + " d " + gk_dtype_name(ddt) + " act " + std::to_string(act));
            }
    a = valid(); a.c = nullptr; a.beta = 0.0f; accepted(a, "c NULL with beta 0");
    a = valid(); a.c = (const void *)(kFake + 64 * kMB + 2); a.beta = 0.0f; accepted(a, "c overlapping d, beta 0 (unread)");
    a = valid(); a.c = a.d; accepted(a, "c == d, in place");
    a = valid(); a.bias = nullptr; accepted(a, "no bias");
    a = valid(); a.ws = nullptr; a.ws_bytes = 0; accepted(a, "no workspace");
    a = valid(); a.ws = nullptr; a.ws_bytes = 1 << 20; accepted(a, "workspace NULL with bytes (ignored)");
    a = valid(); a.ldx = 200; a.ldd = 203; a.ldc = 211; accepted(a, "padded ldx, ldd, ldc");
    a = valid(); a.x = kFake + 128 * kMB + 16; accepted(a, "x + 16 bytes");
    a = valid(); a.d = kFake + 64 * kMB + 2; a.c = kFake + 192 * kMB + 6; accepted(a, "d + 2, c + 6 (bf16 d)");
    a = valid(); a.d = (char *)a.w.packed + a.packed_bytes(); accepted(a, "d right after the packed weight");
    a = valid(); a.m = 1; accepted(a, "m 1");
    a = valid(); a.m = 100000; accepted(a, "m 100000");
    a = valid(); a.w.group = 192; accepted(a, "group = k");
    a = valid(); a.w.n = 8; a.w.k = 64; a.w.group = 32; a.ldd = a.ldc = 8; a.ldx = 64; accepted(a, "8 x 64, group 32");
    if (ex())
        for (int cfg = -1; cfg < gk_w4_config_count(); cfg++)
            for (int wp : {0, 1, 2, 3, 7, 100000}) {
                a = valid(); a.config = cfg; a.warps = wp;
                accepted(a, "config " + std::to_string(cfg) + " warps " + std::to_string(wp));
            }
}

TEST_P(QuantGemmValidation, MZeroIsANoOp)
{
    GemmArgs a = valid();
    a.m = 0;
    EXPECT_EQ(c().call(a), cudaSuccess) << gk_failure_reason();
    EXPECT_STREQ(gk_failure_reason(), "");
    a.d = nullptr; // nothing is written, so nothing is looked at
    a.x = nullptr;
    a.ldd = 0;
    EXPECT_EQ(c().call(a), cudaSuccess) << gk_failure_reason();
    // a failure before clears on the next success
    a = valid(); a.m = -1; c().call(a);
    EXPECT_STRNE(gk_failure_reason(), "");
    a.m = 0;
    EXPECT_EQ(c().call(a), cudaSuccess);
    EXPECT_STREQ(gk_failure_reason(), "");
}

TEST_P(QuantGemmValidation, Weight)
{
    GemmArgs a = valid();
    a = valid(); a.null_w = true; rejected(a, "'w' is a null pointer", "w NULL");
    a = valid(); a.w.packed = nullptr; rejected(a, "'w->packed' is a null pointer", "packed NULL");
    a = valid(); a.w.packed = kFake + 128; rejected(a, "w->packed is not 256-byte aligned", "packed + 128");
    a = valid(); a.w.packed = kFake + 2; rejected(a, "w->packed is not 256-byte aligned", "packed + 2");
    a = valid(); a.w.dtype = GK_F32; rejected(a, "w->dtype 0 is not GK_BF16 or GK_F16", "weight dtype f32");
    a = valid(); a.w.dtype = GK_E5M2; rejected(a, "w->dtype 4", "weight dtype e5m2");
    for (const ShapeCase &s : kBadShapes) {
        a = valid(); a.w.n = s.n; a.w.k = s.k; a.w.group = s.group; a.w.zero_mode = s.zero_mode;
        rejected(a, s.needle, s.needle);
    }
    if (!ex()) {
        // a weight prepacked for the other dtype than x
        a = valid(); a.w.dtype = c().dtype == GK_BF16 ? GK_F16 : GK_BF16;
        rejected(a, std::string("the weight was prepacked for ") + gk_dtype_name(a.w.dtype) + " activations, x is " +
                        gk_dtype_name(c().dtype), "weight of the other dtype");
        a.m = 0;
        rejected(a, "prepacked for", "weight of the other dtype, m 0");
    }
}

TEST_P(QuantGemmValidation, GroupThatDoesNotDivideK)
{
    for (const ShapeCase &s : kGroupNotDividingK) {
        GemmArgs a = valid(); a.w.n = s.n; a.w.k = s.k; a.w.group = s.group; a.w.zero_mode = s.zero_mode; a.ldx = s.k;
        rejected(a, s.needle, "k " + std::to_string(s.k) + ", group " + std::to_string(s.group));
    }
}

TEST_P(QuantGemmValidation, Scalars)
{
    GemmArgs a = valid();
    a = valid(); a.act = 7; rejected(a, "act 7 is not a gk_act", "act 7");
    a = valid(); a.act = -1; rejected(a, "act -1", "act -1");
    a = valid(); a.d_dtype = GK_E4M3; rejected(a, "d_dtype 3 is not GK_BF16, GK_F16 or GK_F32", "d e4m3");
    a = valid(); a.d_dtype = 9; rejected(a, "d_dtype 9", "d_dtype 9");
    a = valid(); a.m = -1; rejected(a, "'m' is -1", "m -1");
    a = valid(); a.m = (int64_t)1 << 31; rejected(a, "'m' is 2147483648", "m 2^31");
    a = valid(); a.m = (int64_t)1 << 40; rejected(a, "'m'", "m 2^40");
    if (ex()) {
        const int count = gk_w4_config_count();
        a = valid(); a.config = count + 1; rejected(a, "config " + std::to_string(count + 1), "config past the dequantize path");
        a = valid(); a.config = -2; rejected(a, "config -2", "config -2");
        a = valid(); a.config = 1 << 20; rejected(a, "config", "config 2^20");
        a = valid(); a.warps = -1; rejected(a, "warps = -1 is negative", "warps -1");
        a = valid(); a.warps = -7; a.m = 0; rejected(a, "warps = -7", "warps -7 with m 0");
    }
}

TEST_P(QuantGemmValidation, Operands)
{
    GemmArgs a = valid();
    a = valid(); a.d = nullptr; rejected(a, "'d' is a null pointer", "d NULL");
    a = valid(); a.d_dtype = GK_F32; a.d = kFake + 64 * kMB + 2; rejected(a, "'d'", "f32 d at 2 bytes");
    a = valid(); a.d = kFake + 64 * kMB + 1; rejected(a, "'d'", "bf16 d at an odd byte");
    a = valid(); a.ldd = 199; rejected(a, "ldd = 199 is smaller than n = 200", "ldd < n");
    a = valid(); a.ldd = (int64_t)1 << 31; rejected(a, "'ldd'", "ldd 2^31");
    a = valid(); a.x = nullptr; rejected(a, "'x' is a null pointer", "x NULL");
    a = valid(); a.x = kFake + 128 * kMB + 2; rejected(a, "x rows must be 16-byte aligned", "x + 2 bytes");
    a = valid(); a.x = kFake + 128 * kMB + 8; rejected(a, "x rows must be 16-byte aligned", "x + 8 bytes");
    a = valid(); a.ldx = 196; rejected(a, "16-byte aligned", "ldx 196 (% 8 != 0)");
    a = valid(); a.ldx = 193; rejected(a, "16-byte aligned", "ldx 193");
    a = valid(); a.ldx = 184; rejected(a, "ldx = 184 is smaller than k = 192", "ldx < k");
    a = valid(); a.ldx = (int64_t)1 << 31; rejected(a, "'ldx'", "ldx 2^31");
    // d overlapping x: D's last row reaches into x
    a = valid(); a.d = (char *)a.x - (16 * 200 + 100) * 2; rejected(a, "'d' and 'x' overlap", "d's end in x");
    a = valid(); a.d = (char *)a.x + 16 * 192 * 2 + 200; a.x = (const char *)a.x; rejected(a, "'d' and 'x' overlap", "d in x's last row");
    // d overlapping the packed weight (its size gk_w4_packed_bytes)
    a = valid(); a.d = (char *)a.w.packed + gk_w4_packed_bytes(200, 192, 64, GK_W4_ZEROS_INT4) - 2;
    rejected(a, "'d' and 'w->packed' overlap", "d in the packed weight's last bytes");
    a = valid(); a.w.zero_mode = GK_W4_SYMMETRIC; a.d = (char *)a.w.packed + gk_w4_packed_bytes(200, 192, 64, GK_W4_SYMMETRIC) - 2;
    rejected(a, "'d' and 'w->packed' overlap", "d in the symmetric packed weight's last bytes");
    a = valid(); a.d = (char *)a.w.packed - (16 * 200 + 200) * 2 + 2; rejected(a, "'d' and 'w->packed' overlap", "d's end in packed");
    // c
    a = valid(); a.c = nullptr; rejected(a, "'c' is a null pointer", "c NULL with beta 0.5");
    a = valid(); a.ldc = 150; rejected(a, "ldc = 150 is smaller than n = 200", "ldc < n");
    a = valid(); a.c = kFake + 192 * kMB + 1; rejected(a, "'c'", "c at an odd byte");
    a = valid(); a.c = (const char *)a.d + 8; rejected(a, "'d' and 'c' overlap without being the same range", "c = d + 8");
    a = valid(); a.c = a.d; a.ldc = 208; rejected(a, "'d' and 'c' overlap", "c = d with another ldc");
    // bias
    a = valid(); a.bias = (const float *)(kFake + 256 * kMB + 2); rejected(a, "'bias'", "bias + 2 bytes");
    a = valid(); a.bias = (const float *)((char *)a.d + 100); rejected(a, "'d' and 'bias' overlap", "bias in d");
    // workspace
    a = valid(); a.ws = kFake + 320 * kMB + 16; rejected(a, "workspace is not 256-byte aligned", "workspace + 16");
    a = valid(); a.ws = kFake + 320 * kMB + 128; rejected(a, "workspace is not 256-byte aligned", "workspace + 128");
    a = valid(); a.ws = kFake + 64 * kMB - 256; rejected(a, "'workspace' and 'd' overlap", "workspace into d");
    a = valid(); a.ws = kFake + 128 * kMB - 256; rejected(a, "'workspace' and 'x' overlap", "workspace into x");
    a = valid(); a.ws = kFake; a.ws_bytes = 256; a.d = kFake + 64 * kMB;
    rejected(a, "'workspace' and 'w->packed' overlap", "workspace over the packed weight");
    a = valid(); a.ws = kFake + 192 * kMB - 256; rejected(a, "'workspace' and 'c' overlap", "workspace into c");
    a = valid(); a.ws = kFake + 256 * kMB - 256; rejected(a, "'workspace' and 'bias' overlap", "workspace into bias");
}

INSTANTIATE_TEST_SUITE_P(Calls, QuantGemmValidation, ::testing::Range(0, 4),
                         [](const ::testing::TestParamInfo<int> &i) { return std::string(kGemmCases[i.param].name); });

// ------------------------------------------------------------------ validation: plan

TEST(QuantValidation, PlanForRefused)
{
    struct {
        int64_t m, n, k;
        int group, zero_mode;
        const char *needle;
    } const cases[] = {
        {0, 200, 192, 64, 1, "'m' is 0"},
        {-3, 200, 192, 64, 1, "'m' is -3"},
        {(int64_t)1 << 31, 200, 192, 64, 1, "'m' is 2147483648"},
        {17, 12, 192, 64, 1, "n = 12"},
        {17, 0, 192, 64, 1, "'n' is 0"},
        {17, 200, 100, 64, 1, "k = 100"},
        {17, 200, 192, 96, 1, "group = 96"},
        {17, 200, 192, 64, 3, "zero_mode 3"},
    };
    for (const auto &cs : cases) {
        const gk_w4_plan p = gk_w4_plan_for(cs.m, cs.n, cs.k, cs.group, cs.zero_mode, 1 << 20);
        const std::string r = gk_failure_reason();
        EXPECT_TRUE(has(r, cs.needle)) << "reason \"" << r << "\", want \"" << cs.needle << "\"";
        EXPECT_EQ(r.rfind("gk_w4_plan_for: ", 0), 0u) << r;
        EXPECT_EQ(p.config, -1) << cs.needle;
        EXPECT_EQ(p.warps, 0) << cs.needle;
        EXPECT_EQ(p.slots, 0) << cs.needle;
        EXPECT_EQ(p.dequant, 0) << cs.needle;
        EXPECT_EQ(p.workspace_bytes, 0u) << cs.needle;
    }
    if (no_gpu()) { // valid arguments go as far as the device query
        const gk_w4_plan p = gk_w4_plan_for(17, 200, 192, 64, 1, 1 << 20);
        EXPECT_EQ(p.config, -1);
        EXPECT_EQ(std::string(gk_failure_reason()).rfind("gk_w4_plan_for: ", 0), 0u) << gk_failure_reason();
    }
}

TEST(QuantValidation, PlanForRefusesAGroupThatDoesNotDivideK)
{
    for (const ShapeCase &s : kGroupNotDividingK) {
        const gk_w4_plan p = gk_w4_plan_for(17, s.n, s.k, s.group, s.zero_mode, 0);
        EXPECT_TRUE(has(gk_failure_reason(), s.needle)) << "k " << s.k << ", group " << s.group << " planned: \""
                                                        << gk_failure_reason() << "\"";
        EXPECT_EQ(p.config, -1);
    }
}

// ------------------------------------------------------------------ the fused kernel, emulated

// quant_emu.h runs the fused kernel's data flow on the host (prepacked lanes, fragments through the
// ISA tables, group flushes, warp ranges, partial slots and their sum): for every configuration,
// group size and zero mode, on shapes with tails in M and N, under the schedule the dispatcher
// makes (with and without room for partials) and forced warp counts, it must give X W^T of the
// manual's W. The partial slots it used must fit the slots the schedule reserved.
static double emu_weight(const QuantEmuWeight &w, int row, int kk)
{
    const int g = kk / w.group;
    const double s = w.s[(size_t)g * w.n + row], u = w.u[(size_t)row * w.k + kk];
    if (w.mode == GK_W4_SYMMETRIC) return (u - 8.0) * s;
    if (w.mode == GK_W4_ZEROS_INT4) return (u - w.z[(size_t)g * w.n + row]) * s;
    return u * s - w.z[(size_t)g * w.n + row] * s;
}

static void emu_check(const QuantEmuWeight &w, const std::vector<double> &x, int m, int config, int64_t warps,
                      int64_t chunk, int partials, int slots_reserved, const std::string &what)
{
    const gk_w4_config cfg = gk_w4_config_info(config);
    std::vector<double> d;
    const int used = quant_emu_gemm(w, x, m, cfg.row_tiles, cfg.token_tiles, warps, chunk, partials, &d);
    if (partials) EXPECT_LE(used, slots_reserved) << what << ": more partial slots than reserved";
    int bad = 0;
    for (int i = 0; i < m && bad < 5; i++)
        for (int j = 0; j < w.n && bad < 5; j++) {
            double ref = 0.0, mag = 0.0;
            for (int kk = 0; kk < w.k; kk++) {
                const double t = x[(size_t)i * w.k + kk] * emu_weight(w, j, kk);
                ref += t;
                mag += fabs(t);
            }
            const double got = d[(size_t)i * w.n + j];
            if (!(fabs(got - ref) <= 1e-9 * mag + 1e-12)) {
                ADD_FAILURE() << what << ": D[" << i << "][" << j << "] = " << got << ", want " << ref;
                bad++;
            }
        }
}

TEST(QuantEmulation, FusedKernelDataFlow)
{
    GkRng rng(0x5157u);
    const int shapes[][3] = {{1, 40, 64}, {3, 200, 192}, {17, 8, 256}, {40, 104, 128}};
    const int sms = 3; // a small GPU: ranges end inside pairs
    std::vector<int> bpsm((size_t)gk_w4_config_count(), 2);
    for (const auto &sh : shapes) {
        const int m = sh[0], n = sh[1], k = sh[2];
        std::vector<double> x((size_t)m * k);
        for (double &v : x) v = (double)((int)(rng.next() >> 54) - 512) / 512.0;
        for (int group : {32, 64, 128, k}) {
            if (k % group) continue;
            for (int mode = 0; mode < 3; mode++) {
                QuantEmuWeight w;
                w.n = n;
                w.k = k;
                w.group = group;
                w.mode = mode;
                w.u.resize((size_t)n * k);
                for (uint8_t &v : w.u) v = (uint8_t)(rng.next() >> 60);
                w.s.resize((size_t)(k / group) * n);
                w.z.resize(w.s.size());
                for (size_t i = 0; i < w.s.size(); i++) {
                    w.s[i] = 0.01 * (1 + (int)(rng.next() >> 61));
                    w.z[i] = mode == GK_W4_ZEROS_FLOAT ? 0.25 * (int)(rng.next() >> 59) : (double)(rng.next() >> 60);
                }
                const int var = gk_w4_variant(group, mode);
                for (int config = 0; config < gk_w4_config_count(); config++) {
                    const gk_w4_config ci = gk_w4_config_info(config);
                    if (ci.lean && (m > 8 * ci.token_tiles || var < 2)) continue; // refused (GPU test)
                    const std::string what = "m " + std::to_string(m) + " n " + std::to_string(n) + " k " +
                                             std::to_string(k) + " group " + std::to_string(group) + " mode " +
                                             std::to_string(mode) + " config " + std::to_string(config);
                    gk_w4_sched sc;
                    gk_w4_schedule(config, 0, m, n, k, var, (size_t)-1, sms, bpsm.data(), &sc);
                    emu_check(w, x, m, config, sc.warps, sc.chunk, sc.partial_bytes > 0, sc.slots, what + " (schedule)");
                    gk_w4_schedule(config, 0, m, n, k, var, 0, sms, bpsm.data(), &sc); // no workspace: whole pairs
                    EXPECT_EQ(sc.partial_bytes, 0u) << what;
                    emu_check(w, x, m, config, sc.warps, sc.chunk, 0, 1, what + " (whole pairs)");
                    for (int forced : {1, 3, 7, 1000}) {
                        gk_w4_schedule(config, forced, m, n, k, var, (size_t)-1, sms, bpsm.data(), &sc);
                        emu_check(w, x, m, config, sc.warps, sc.chunk, sc.partial_bytes > 0, sc.slots,
                                  what + " (" + std::to_string(forced) + " warps)");
                    }
                }
            }
        }
    }
}
