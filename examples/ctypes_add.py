#!/usr/bin/env python3
"""gk from Python through ctypes: libgk.so built from gk_impl.cu with

    nvcc -shared -O3 -arch=sm_90a -Xcompiler -fPIC -I vendor/gk gk_impl.cu -o libgk.so
    python3 ctypes_add.py ./libgk.so

Every gk function has C linkage, so it is found by its plain name. Pointers are device pointers
(from cudaMalloc, or torch's tensor.data_ptr()); the return value is a cudaError_t, 0 on
success, and gk_failure_reason() says why a call failed. Without a GPU this shows the error path.
"""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "./libgk.so")
lib.gk_failure_reason.restype = ctypes.c_char_p
lib.gk_add_f32.restype = ctypes.c_int
lib.gk_add_f32.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]

err = lib.gk_add_f32(None, None, None, -1, None)  # checked before any CUDA call: needs no GPU
print("ctypes_add: gk_add_f32 with n = -1 returns %d: %s" % (err, lib.gk_failure_reason().decode()))
sys.exit(0 if err == 1 else 1)  # 1 is cudaErrorInvalidValue
