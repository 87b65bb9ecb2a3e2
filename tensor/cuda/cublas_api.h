// cuBLAS, opened with dlopen on the first GEMM instead of linked into libddl.so.
// libcublas.so needs libcublasLt.so (over 500 MB in CUDA 13), whose static
// initialisers ran in every process that loaded libddl.so: about half a second of
// CPU time at each start, GPU or not, for every rank, test and command-line tool.
#pragma once

#include <cublas_v2.h>

namespace ddl::cuda::detail {

// The cuBLAS functions ddl calls (dnn.cpp, gemm.cpp), under their header names.
struct CublasApi {
  decltype(&::cublasCreate) create;
  decltype(&::cublasSetStream) set_stream;
  decltype(&::cublasSetWorkspace) set_workspace;
  decltype(&::cublasSetMathMode) set_math_mode;
  decltype(&::cublasGetStatusString) status_string;
  decltype(&::cublasSgemmStridedBatched) sgemm_strided_batched;
  decltype(&::cublasDgemmStridedBatched) dgemm_strided_batched;
  // The exported overload (the header adds an inline one taking a cudaDataType compute type).
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                            const void*, const void*, cudaDataType, int, long long, const void*,
                                            cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                            long long, int, cublasComputeType_t, cublasGemmAlgo_t);
};

// Opens libcublas.so.<major of the headers> on the first call (thread-safe); throws
// ddl::Error naming the library and dlerror()'s reason when it or a function is missing.
const CublasApi& cublas();

}  // namespace ddl::cuda::detail
