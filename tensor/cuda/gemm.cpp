// CUDA strided-batched GEMM on cuBLAS (Sgemm/Dgemm StridedBatched). ddl is
// row-major and cuBLAS column-major: a row-major [M, N] C is a column-major
// [N, M] C^T, so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T by
// swapping the operands (and M with N). TF32 only when cuda::allow_tf32().
// float16/bfloat16 go through cublasGemmStridedBatchedEx with float32 compute.
#include <ddl/tensor/core/devices.h>
#include <ddl/tensor/cuda/cublas_api.h>
#include <ddl/tensor/cuda/dnn.h>
#include <ddl/tensor/kernels/gemm_kernel.h>

namespace ddl::cuda::detail {
namespace {

std::string describe_gemm(const kernels::GemmArgs& g) {
  return ::ddl::detail::str_cat("matmul: ", g.dtype, " GEMM ", g.trans_a ? "A^T" : "A", " * ", g.trans_b ? "B^T" : "B",
                                " with M=", g.M, " N=", g.N, " K=", g.K, " lda=", g.lda, " ldb=", g.ldb, " ldc=", g.ldc,
                                " batch=", g.batch);
}

// C_b[M, N] = alpha op(A_b) op(B_b) + beta C_b for every b (row-major, see the header comment).
void gemm_cuda(const kernels::GemmArgs& g) {
  if (g.batch == 0 || g.M == 0 || g.N == 0) return;
  const int device = g.device;  // from the tensors (no pointer query per GEMM)
  DeviceGuard guard(device);
  cublasHandle_t h = cublas_handle(device);
  const char* op = "matmul";
  const int m = to_int(g.N, op, "N"), n = to_int(g.M, op, "M"), k = to_int(g.K, op, "K");
  const int lda = to_int(g.ldb, op, "ldb"), ldb = to_int(g.lda, op, "lda"), ldc = to_int(g.ldc, op, "ldc");
  const int batch = to_int(g.batch, op, "batch");
  const cublasOperation_t op_a = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const bool tf32 = g.dtype == DType::Float32 && allow_tf32();
  DDL_CUBLAS_CHECK(cublas().set_math_mode(h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
                   describe_gemm(g));
  if (g.dtype == DType::Float32) {
    const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
    DDL_CUBLAS_CHECK(cublas().sgemm_strided_batched(h, op_a, op_b, m, n, k, &alpha, static_cast<const float*>(g.B), lda,
                                                    g.stride_b, static_cast<const float*>(g.A), ldb, g.stride_a, &beta,
                                                    static_cast<float*>(g.C), ldc, g.stride_c, batch),
                     describe_gemm(g));
  } else if (is_reduced_float(g.dtype)) {
    // See Note [Half compute]: 16-bit operands and output, float32 accumulation and alpha/beta.
    // One exception: under CUBLAS_DEFAULT_MATH a 16-bit output lets cuBLAS reduce split-K
    // partial sums in the output type (cuBLAS docs, cublasMath_t: only
    // CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION forces the compute type), as PyTorch
    // allows by default (torch.backends.cuda.matmul.allow_{fp16,bf16}_reduced_precision_reduction).
    const cudaDataType_t t = g.dtype == DType::Float16 ? CUDA_R_16F : CUDA_R_16BF;
    const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
    DDL_CUBLAS_CHECK(cublas().gemm_strided_batched_ex(h, op_a, op_b, m, n, k, &alpha, g.B, t, lda, g.stride_b, g.A, t,
                                                      ldb, g.stride_a, &beta, g.C, t, ldc, g.stride_c, batch,
                                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                     describe_gemm(g));
  } else {
    DDL_CHECK(g.dtype == DType::Float64, "matmul: expected a float32 or float64 tensor, got ", g.dtype);
    DDL_CUBLAS_CHECK(cublas().dgemm_strided_batched(h, op_a, op_b, m, n, k, &g.alpha, static_cast<const double*>(g.B),
                                                    lda, g.stride_b, static_cast<const double*>(g.A), ldb, g.stride_a,
                                                    &g.beta, static_cast<double*>(g.C), ldc, g.stride_c, batch),
                     describe_gemm(g));
  }
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::gemm_kernel, CUDA, &gemm_cuda);

}  // namespace ddl::cuda::detail
