// Loads cuBLAS on first use (see cublas_api.h). dlopen searches libddl.so's RUNPATH,
// which holds the CUDA library folder meson found (dlopen(3), "RUNPATH").
#include <dlfcn.h>

#include <ddl/base/error.h>
#include <ddl/tensor/cuda/cublas_api.h>

// The library's name and each function's symbol after the header's macros
// (cublasCreate is cublasCreate_v2): stringized after expansion.
#define DDL_CUBLAS_STR2(x) #x
#define DDL_CUBLAS_STR(x) DDL_CUBLAS_STR2(x)

namespace ddl::cuda::detail {
namespace {

constexpr const char* kCublasLibrary = "libcublas.so." DDL_CUBLAS_STR(CUBLAS_VER_MAJOR);

template <class Fn>
void load(void* library, Fn& fn, const char* symbol) {
  fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  const char* why = fn == nullptr ? dlerror() : nullptr;
  DDL_CHECK(fn != nullptr, "cuBLAS: ", kCublasLibrary, " has no function ", symbol, ": ", why ? why : "null symbol");
}

CublasApi open_cublas() {
  void* library = dlopen(kCublasLibrary, RTLD_NOW | RTLD_LOCAL);
  const char* why = library == nullptr ? dlerror() : nullptr;
  DDL_CHECK(library != nullptr, "cuBLAS: cannot open ", kCublasLibrary,
            " (a GPU matmul needs it): ", why ? why : "unknown reason");
  CublasApi api{};
  load(library, api.create, DDL_CUBLAS_STR(cublasCreate));
  load(library, api.set_stream, DDL_CUBLAS_STR(cublasSetStream));
  load(library, api.set_workspace, DDL_CUBLAS_STR(cublasSetWorkspace));
  load(library, api.set_math_mode, DDL_CUBLAS_STR(cublasSetMathMode));
  load(library, api.status_string, DDL_CUBLAS_STR(cublasGetStatusString));
  load(library, api.sgemm_strided_batched, DDL_CUBLAS_STR(cublasSgemmStridedBatched));
  load(library, api.dgemm_strided_batched, DDL_CUBLAS_STR(cublasDgemmStridedBatched));
  load(library, api.gemm_strided_batched_ex, DDL_CUBLAS_STR(cublasGemmStridedBatchedEx));
  return api;  // the library stays open for the life of the process
}

}  // namespace

const CublasApi& cublas() {
  static const CublasApi api = open_cublas();  // a throw leaves it for the next call to retry
  return api;
}

}  // namespace ddl::cuda::detail
