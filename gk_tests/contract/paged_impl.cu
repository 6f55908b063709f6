// Contract TU for gk_paged.cuh: the declarations compile alone, then the implementation (stb
// style), which instantiates its one kernel (the fused RoPE + paged cache append, every dtype).
#include "gk/gk_paged.cuh"
#define GK_IMPLEMENTATION
#include "gk/gk_paged.cuh"
