// Random draws on the GPU: rand, randn, bernoulli, randint, uniform_ and normal_
// (and so dropout masks and parameter init) of a CUDA tensor run here, one thread
// per element computing tensor/kernels/random_functors.h's draw_element, the code the CPU
// runs: the same (seed, offset) gives the same numbers on both devices (bit for
// bit except randn, whose log and cos may differ by an ulp or two between
// glibc and CUDA's libdevice). No generator state lives on the device.
#include <ddl/tensor/core/random.h>
#include <ddl/tensor/cuda/common.h>
#include <ddl/tensor/kernels/random_functors.h>

namespace ddl::cuda::detail {
namespace {

// t: [n] contiguous; element i = draw_element(seed, offset, i).
template <typename T>
__global__ void random_fill(T* t, int64_t n, uint64_t seed, uint64_t offset, bool dbl, random_math::Transform tr) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)
    t[i] = static_cast<T>(random_math::draw_element(seed, offset, i, dbl, tr));
}

void random_fill_cuda(const Tensor& t, uint64_t seed, uint64_t offset, const random_math::Transform& tr) {
  DDL_ASSERT(t.is_contiguous(), "random: expected a contiguous tensor, got ", describe(t));
  if (t.numel() == 0) return;
  DeviceGuard guard(t.device().index);
  const cudaStream_t s = current_stream(t.device().index);
  const bool dbl = t.dtype() == DType::Float64;
  DDL_DISPATCH_NUMERIC(t.dtype(), "random", [&] {
    random_fill<scalar_t>
        <<<blocks_for(t.numel()), kBlockThreads, 0, s>>>(t.data<scalar_t>(), t.numel(), seed, offset, dbl, tr);
  });
  DDL_CUDA_KERNEL_CHECK();
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::random_fill_kernel, CUDA, &random_fill_cuda);

}  // namespace ddl::cuda::detail
