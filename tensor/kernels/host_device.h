// DDL_HOST_DEVICE marks a small function usable both in host code and in CUDA
// kernels (nvcc's __host__ __device__), so a formula shared by the CPU and CUDA
// kernels is written once; plain `inline` in a C++ compiler.
#pragma once

#ifdef __CUDACC__
#define DDL_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define DDL_HOST_DEVICE inline
#endif
