// Contract TU for gk_attention.cuh: the declarations compile alone, then the implementation (stb
// style), which instantiates every shipped kernel (each mma.sync configuration for bf16 and f16,
// the split-K combine).
#include "gk/gk_attention.cuh"
#define GK_IMPLEMENTATION
#include "gk/gk_attention.cuh"
