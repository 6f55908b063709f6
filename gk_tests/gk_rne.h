// Independent references for gk's exactly defined conversions: fp32 to bf16, f16, fp8 e4m3 and
// e5m2, round to nearest with ties to even, and every narrow format back to fp32. They work on
// the float's bits with integer arithmetic only (no CUDA conversion intrinsics, no gk_core
// helpers, no floating-point rounding), so a mistake that gk shares with CUDA's conversions, or
// the host path with the device path, cannot hide behind its own reference. Plain C++, host only.
#ifndef GK_RNE_H
#define GK_RNE_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

// How a format treats values past its largest finite one.
enum GkRneMode {
    GK_RNE_IEEE = 0,    // bf16, f16: an exponent field of all ones is inf (mantissa 0) or NaN;
                        // overflow rounds to inf
    GK_RNE_SATFINITE,   // e5m2 as gk converts to it: IEEE layout, but overflow and inf give the
                        // largest finite value (NaN stays NaN)
    GK_RNE_E4M3_SAT     // OCP e4m3: no inf, only S.1111.111 is NaN, largest finite S.1111.110 =
                        // 448; overflow and inf give +-448
};

// The narrow formats gk stores: exponent bits, mantissa bits, overflow rule.
struct GkRneFormat {
    int ebits, mbits;
    GkRneMode mode;
};
static const GkRneFormat kGkRneBf16 = {8, 7, GK_RNE_IEEE};
static const GkRneFormat kGkRneF16 = {5, 10, GK_RNE_IEEE};
static const GkRneFormat kGkRneE4m3 = {4, 3, GK_RNE_E4M3_SAT};
static const GkRneFormat kGkRneE5m2 = {5, 2, GK_RNE_SATFINITE};

inline uint32_t gk_rne_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
inline float gk_rne_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

inline bool gk_rne_is_nan_code(uint32_t c, GkRneFormat f)
{
    const uint32_t field = (c >> f.mbits) & ((1u << f.ebits) - 1), mant = c & ((1u << f.mbits) - 1);
    if (f.mode == GK_RNE_E4M3_SAT) return field == 15 && mant == 7;
    return field == (1u << f.ebits) - 1 && mant != 0;
}

// fp32 bits u rounded to nearest, ties to even, into format f; returns the code (in the low
// 1 + ebits + mbits bits). NaN gives a quiet NaN (payload and sign are not part of the contract:
// compare NaN codes with gk_rne_same).
inline uint32_t gk_rne_from_f32(uint32_t u, GkRneFormat f)
{
    const uint32_t sign = (u >> 31) << (f.ebits + f.mbits);
    const uint32_t a = u & 0x7fffffffu;
    const int bias = (1 << (f.ebits - 1)) - 1, emin = 1 - bias;
    const uint32_t ones = (1u << f.ebits) - 1;
    const uint32_t top_field = f.mode == GK_RNE_E4M3_SAT ? ones : ones - 1;           // of a finite value
    const uint32_t top_mant = f.mode == GK_RNE_E4M3_SAT ? (1u << f.mbits) - 2 : (1u << f.mbits) - 1;
    const uint32_t max_finite = (top_field << f.mbits) | top_mant;
    const uint32_t past_max = f.mode == GK_RNE_IEEE ? ones << f.mbits : max_finite;  // inf, or saturation
    if (a > 0x7f800000u) return f.mode == GK_RNE_E4M3_SAT ? 0x7fu : (ones << f.mbits) | (1u << (f.mbits - 1));
    if (a == 0x7f800000u) return sign | past_max;
    // a = sig * 2^e exactly, sig < 2^24
    const uint32_t E = a >> 23;
    uint64_t sig = E ? (a & 0x7fffffu) | 0x800000u : a;
    const int e = E ? (int)E - 150 : -149;
    if (sig == 0) return sign;
    int msb = 0;
    while ((sig >> (msb + 1)) != 0) msb++;
    const int x = e + msb;                             // floor(log2 |value|)
    const int qexp = (x >= emin ? x : emin) - f.mbits; // the format's spacing there: 2^qexp
    const int shift = qexp - e;                        // bits of sig below the spacing
    uint64_t r;
    if (shift <= 0) {
        r = sig << -shift; // exact (not reached for the formats above: all are coarser than fp32)
    } else if (shift > 40) {
        r = 0; // below half the smallest step: sig < 2^24 <= 2^(shift - 1)
    } else {
        r = sig >> shift;
        const uint64_t rem = sig & ((1ull << shift) - 1), half = 1ull << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++; // ties to even
    }
    if (r == 0) return sign; // +-0
    uint32_t field, mant;
    if (r >= (1u << f.mbits)) { // normal; a carry may have made r 2^(mbits + 1)
        int q = qexp;
        if (r == (2ull << f.mbits)) {
            r >>= 1;
            q++;
        }
        field = (uint32_t)(q + f.mbits + bias);
        mant = (uint32_t)r - (1u << f.mbits);
    } else { // subnormal
        field = 0;
        mant = (uint32_t)r;
    }
    if (field > top_field || (field == top_field && mant > top_mant)) return sign | past_max;
    return sign | (field << f.mbits) | mant;
}

// A code of format f widened to fp32 bits, exactly (every narrow value is an fp32 value). NaN
// gives 0x7fc00000 with the code's sign.
inline uint32_t gk_rne_to_f32(uint32_t c, GkRneFormat f)
{
    const uint32_t sign = ((c >> (f.ebits + f.mbits)) & 1u) << 31;
    const uint32_t field = (c >> f.mbits) & ((1u << f.ebits) - 1), mant = c & ((1u << f.mbits) - 1);
    const int bias = (1 << (f.ebits - 1)) - 1, emin = 1 - bias;
    if (gk_rne_is_nan_code(c, f)) return sign | 0x7fc00000u;
    if (f.mode != GK_RNE_E4M3_SAT && field == (1u << f.ebits) - 1) return sign | 0x7f800000u;
    if (field == 0 && mant == 0) return sign;
    if (field != 0) return sign | ((uint32_t)((int)field - bias + 127) << 23) | (mant << (23 - f.mbits));
    int p = 0; // subnormal: mant * 2^(emin - mbits)
    while ((mant >> (p + 1)) != 0) p++;
    const int x = emin - f.mbits + p;
    if (x >= -126) return sign | ((uint32_t)(x + 127) << 23) | ((mant - (1u << p)) << (23 - p));
    return sign | (mant << (emin - f.mbits + 149)); // an fp32 subnormal (bf16's subnormals)
}

// Whether two codes of width `bits` are the same result: equal bits, or both NaN.
inline bool gk_rne_same(uint32_t got, uint32_t want, GkRneFormat f)
{
    return got == want || (gk_rne_is_nan_code(got, f) && gk_rne_is_nan_code(want, f));
}
inline bool gk_rne_same_f32(uint32_t got, uint32_t want)
{
    const bool gn = (got & 0x7fffffffu) > 0x7f800000u, wn = (want & 0x7fffffffu) > 0x7f800000u;
    return got == want || (gn && wn);
}

inline double gk_rne_value(uint32_t c, GkRneFormat f) { return gk_rne_float(gk_rne_to_f32(c, f)); }

// Half the spacing of the e4m3 grid at magnitude m (m >= 0): 2^(floor(log2 m) - 4) for normal
// values, 2^-10 below the smallest normal (2^-6). Round to nearest lands within it.
inline double gk_rne_e4m3_half_step(double m)
{
    if (!(m >= 0x1p-6)) return 0x1p-10;
    int k = 0;
    std::frexp(m, &k); // m = f 2^k, f in [0.5, 1): floor(log2 m) = k - 1
    return std::ldexp(1.0, k - 1 - 4);
}

// fp32 bit patterns that probe every rounding decision: the specials (+-0, +-inf, quiet and
// signalling NaNs of both signs, the smallest and largest subnormal and normal, the largest
// finite); then for each sign and exponent field, and each position b of the first dropped bit
// (0..22, and 23: the value a power of two), the exact tie there and its neighbours, with the
// kept bits' last bit even and odd (ties to even both ways) and all ones (the carry into the next
// binade); then n_random uniformly random bit patterns from the seed.
inline std::vector<uint32_t> gk_rne_probe_f32(uint64_t seed, size_t n_random)
{
    std::vector<uint32_t> v = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
                               0x7f800001u, 0xff800001u, 0x7fffffffu, 0xffffffffu, 0x00000001u, 0x80000001u,
                               0x007fffffu, 0x807fffffu, 0x00800000u, 0x80800000u, 0x7f7fffffu, 0xff7fffffu,
                               0x3f800000u, 0xbf800000u};
    uint64_t s = seed ^ 0x243f6a8885a308d3ull;
    auto next = [&s]() {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    };
    for (uint32_t sign = 0; sign < 2; sign++)
        for (uint32_t E = 0; E < 255; E++) {
            const uint32_t base = (sign << 31) | (E << 23);
            v.push_back(base);
            v.push_back(base | 1u);
            v.push_back(base | 0x7fffffu);
            for (int b = 0; b < 23; b++) {
                const uint32_t below = (1u << b) - 1, above = 0x7fffffu & ~((2u << b) - 1);
                const uint32_t kept_lsb = 2u << b;
                const uint32_t hi = (uint32_t)next() & above;
                const uint32_t his[3] = {hi & ~kept_lsb & above, (hi | kept_lsb) & above, above};
                for (uint32_t h : his) {
                    v.push_back(base | h | (1u << b));                     // the tie
                    v.push_back(base | h | below);                         // just below it
                    if (b > 0) v.push_back(base | h | (1u << b) | 1u);     // just above it
                }
            }
        }
    for (size_t i = 0; i < n_random; i++) v.push_back((uint32_t)next());
    return v;
}

// fp32 bit patterns around every finite code of format f (both signs): the code's value, the
// midpoint to the next code (an exact tie: one bit more than the format holds), one fp32 ulp either
// side of the midpoint, and the next code's value; past the largest finite code, the same around
// the grid point one step further (464 for e4m3, 61440 for e5m2, the ties that must saturate or
// round down).
inline std::vector<uint32_t> gk_rne_probe_grid(GkRneFormat f)
{
    std::vector<uint32_t> v;
    const uint32_t inf_field = ((1u << f.ebits) - 1) << f.mbits;
    const uint32_t top = f.mode == GK_RNE_E4M3_SAT ? inf_field | ((1u << f.mbits) - 2) : inf_field - 1;
    for (uint32_t k = 0; k <= top; k++) {
        const double a = gk_rne_value(k, f);
        const double b = k < top ? gk_rne_value(k + 1, f) : a + (a - gk_rne_value(k - 1, f));
        const uint32_t mid = gk_rne_bits((float)((a + b) / 2));
        const uint32_t around[5] = {gk_rne_bits((float)a), mid - 1, mid, mid + 1, gk_rne_bits((float)b)};
        for (uint32_t u : around) {
            v.push_back(u);
            v.push_back(u | 0x80000000u);
        }
    }
    return v;
}

#endif // GK_RNE_H
