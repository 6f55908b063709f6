// Contract TU for gk_reduce.cuh: the declarations compile alone, then the implementation
// (stb style), which instantiates every shipped kernel.
#include "gk/gk_reduce.cuh"
#define GK_IMPLEMENTATION
#include "gk/gk_reduce.cuh"
