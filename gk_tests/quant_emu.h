// A host emulation of gk_quant.cuh's fused W4A16 kernel, position by position, lane by lane: the
// prepacked lanes built with gk_w4_code_src (the prepack kernel's map), the records laid out as
// the prepack writes them, each warp's range from gk_w4_start, the mma.m16n8k16 A and B
// fragments assembled from the lanes' words through the PTX ISA's fragment tables (gk_mma_a_pos,
// gk_mma_b_pos: the host tests check those against the ISA), the kernel's group flushes (G 32
// after steps 1 and 3, 64 every unit, 128 odd units, and a segment's end), partial slots
// numbered w - gk_w4_warp_of(the pair's first position) and summed in slot order. It checks the
// layout, the k permutation, the records and the schedule; the instructions themselves run only
// on a GPU (quant_gpu_test).
//
// Arithmetic in double: codes minus zero points are exact integers, as the kernel's bf16 / f16
// fma makes them; float zero points form u s - z s, which the kernel rounds to the dtype (the
// emulation does not round: compare it to a double reference of the same formula).
#ifndef GK_QUANT_EMU_H
#define GK_QUANT_EMU_H

#include <cstdint>
#include <cstring>
#include <vector>

struct QuantEmuWeight {
    int n, k, group, mode;          // mode: gk_w4_zeros
    std::vector<uint8_t> u;         // [n][k] unsigned codes 0..15 (symmetric: the signed value + 8)
    std::vector<double> s;          // [k / group][n] scales (as the kernel holds them)
    std::vector<double> z;          // [k / group][n] zero points (int4 codes, or float values)
};

// The emulated kernel: D[m][n] (no epilogue: alpha 1, no bias). rw, nt: the configuration's
// tiles; warps, chunk, partials: the schedule (chunk 1 with partials: ranges cut anywhere;
// chunk = units, no partials: whole pairs). Returns the slots the pairs used at most.
inline int quant_emu_gemm(const QuantEmuWeight &w, const std::vector<double> &x, int m, int rw, int nt,
                          int64_t warps, int64_t chunk, int partials, std::vector<double> *d)
{
    const int n = w.n, k = w.k, units = k / GK_W4_UNIT;
    const int tiles = (int)gk_w4_tiles(n);
    const int group_log2 = w.group == 32 ? 5 : w.group == 64 ? 6 : w.group == 128 ? 7 : 0;
    // prepacked codes: [tile][unit][lane][word], nibble by nibble through the prepack's map
    std::vector<uint32_t> codes((size_t)tiles * units * 32 * 4, 0u);
    for (int rt = 0; rt < tiles; rt++)
        for (int u = 0; u < units; u++)
            for (int lane = 0; lane < 32; lane++)
                for (int word = 0; word < 4; word++)
                    for (int nib = 0; nib < 8; nib++) {
                        int tr, tk;
                        gk_w4_code_src(lane, word, nib, &tr, &tk);
                        const int row = rt * 16 + tr, kk = u * GK_W4_UNIT + tk;
                        const uint32_t v = row < n ? w.u[(size_t)row * k + kk] : 0u;
                        codes[(((size_t)rt * units + u) * 32 + lane) * 4 + word] |= v << (4 * nib);
                    }
    // records: [tile][group][i][h] for rows i + 8 h (zero past n)
    auto rec = [&](const std::vector<double> &v, int rt, int g, int i, int h) {
        const int row = rt * 16 + i + 8 * h;
        return row < n ? v[(size_t)g * n + row] : 0.0;
    };
    const int64_t token_tiles = (m + 8 * nt - 1) / (8 * nt), row_groups = (tiles + rw - 1) / rw;
    const int64_t total = row_groups * token_tiles * units;
    int max_slots = 1;
    std::vector<std::vector<double>> partial; // [slot][m * n]
    d->assign((size_t)m * n, 0.0);
    for (int64_t wi = 0; wi < warps; wi++) {
        const int64_t begin = gk_w4_start(total, chunk, warps, wi), end = gk_w4_start(total, chunk, warps, wi + 1);
        std::vector<double> acc((size_t)rw * 16 * nt * 8, 0.0), tmp(acc.size(), 0.0);
        for (int64_t pos = begin; pos < end; pos++) {
            const int64_t pair = pos / units;
            const int u = (int)(pos % units), rg = (int)(pair / token_tiles), tt = (int)(pair % token_tiles);
            const int g_first = group_log2 ? (u * GK_W4_UNIT) >> group_log2 : 0;
            const int two = group_log2 == 5;
            const int pair_end = u == units - 1 || pos == end - 1;
            const int flush_end = (group_log2 && group_log2 < 7) || (group_log2 == 7 && (u & 1)) || pair_end;
            for (int s = 0; s < 4; s++) {
                const int g = g_first + (two && s >= 2);
                for (int r = 0; r < rw; r++) {
                    const int rt = rg * rw + r;
                    if (rt >= tiles) continue; // zero-filled: contributes nothing, never stored
                    // the A fragment of step s: register e of lane L is the pair (e, e + 4) of word s
                    double A[16][16];
                    for (int lane = 0; lane < 32; lane++)
                        for (int i = 0; i < 8; i++) {
                            int row, col;
                            gk_mma_a_pos(lane, i, &row, &col);
                            const int e = i / 2, hi = i % 2;
                            const uint32_t word = codes[(((size_t)rt * units + u) * 32 + lane) * 4 + s];
                            const double uu = (double)((word >> (4 * (e + 4 * hi))) & 15u);
                            const int h = row >= 8, ii = row % 8;
                            double a;
                            if (w.mode == GK_W4_ZEROS_FLOAT)
                                a = uu * rec(w.s, rt, g, ii, h) - rec(w.z, rt, g, ii, h) * rec(w.s, rt, g, ii, h);
                            else
                                a = uu - (w.mode == GK_W4_SYMMETRIC ? 8.0 : rec(w.z, rt, g, ii, h));
                            A[row][col] = a;
                        }
                    for (int t = 0; t < nt; t++) {
                        // the B fragment: lane L's X chunks are token L / 4's k 8 (L % 4) .. + 7 and
                        // 32 + 8 (L % 4) .. + 7 of the unit; register h of step s is word 2 s + h
                        double B[16][8];
                        for (int lane = 0; lane < 32; lane++)
                            for (int i = 0; i < 4; i++) {
                                int row, col;
                                gk_mma_b_pos(lane, i, &row, &col);
                                const int tok = (tt * nt + t) * 8 + lane / 4;
                                const int kk = u * GK_W4_UNIT + 32 * (s / 2) + 8 * (lane % 4) + 4 * (s % 2) + 2 * (i / 2) + i % 2;
                                B[row][col] = tok < m ? x[(size_t)tok * k + kk] : 0.0;
                            }
                        double *c = (w.mode == GK_W4_ZEROS_FLOAT ? acc.data() : tmp.data()) + (size_t)(r * nt + t) * 128;
                        for (int i = 0; i < 16; i++)
                            for (int j = 0; j < 8; j++) {
                                double sum = 0.0;
                                for (int q = 0; q < 16; q++) sum += A[i][q] * B[q][j];
                                c[i * 8 + j] += sum;
                            }
                    }
                }
                if (w.mode != GK_W4_ZEROS_FLOAT && ((s == 1 && two) || (s == 3 && flush_end)))
                    for (int r = 0; r < rw; r++) {
                        const int rt = rg * rw + r;
                        for (int t = 0; t < nt; t++)
                            for (int i = 0; i < 16; i++)
                                for (int j = 0; j < 8; j++) {
                                    const size_t q = (size_t)(r * nt + t) * 128 + i * 8 + j;
                                    if (rt < tiles) acc[q] += tmp[q] * rec(w.s, rt, g, i % 8, i / 8);
                                    tmp[q] = 0.0;
                                }
                    }
            }
            if (pair_end) {
                int sl = 0;
                if (partials) {
                    sl = (int)(wi - gk_w4_warp_of(pair * units, total, chunk, warps));
                    if (sl + 1 > max_slots) max_slots = sl + 1;
                    while ((int)partial.size() <= sl) partial.push_back(std::vector<double>((size_t)m * n, 0.0));
                }
                for (int r = 0; r < rw; r++)
                    for (int t = 0; t < nt; t++)
                        for (int i = 0; i < 16; i++)
                            for (int j = 0; j < 8; j++) {
                                const int col = (rg * rw + r) * 16 + i, tok = (tt * nt + t) * 8 + j;
                                if (col >= n || tok >= m) continue;
                                const double v = acc[(size_t)(r * nt + t) * 128 + i * 8 + j];
                                if (partials) partial[sl][(size_t)tok * n + col] = v;
                                else (*d)[(size_t)tok * n + col] = v;
                            }
                std::fill(acc.begin(), acc.end(), 0.0);
            }
        }
    }
    if (partials) // the sum: each output's pair, slots 0 .. w1 - w0 in order
        for (int tok = 0; tok < m; tok++)
            for (int col = 0; col < n; col++) {
                const int64_t pair = (int64_t)(col / (16 * rw)) * token_tiles + tok / (8 * nt);
                const int64_t w0 = gk_w4_warp_of(pair * units, total, chunk, warps);
                const int64_t w1 = gk_w4_warp_of(pair * units + units - 1, total, chunk, warps);
                double v = 0.0;
                for (int64_t z = 0; z <= w1 - w0; z++) v += partial[(size_t)z][(size_t)tok * n + col];
                (*d)[(size_t)tok * n + col] = v;
            }
    return max_slots;
}

#endif
