// CUDA same-device copy (any strides, dtype conversion through CastFn, the
// functor the CPU copy uses) and fill. Copies between devices are not here:
// they go through ddl::copy_between_devices (tensor/core/devices.cpp).
#include <ddl/tensor/core/copy.h>
#include <ddl/tensor/core/factory_value.h>
#include <ddl/tensor/cuda/indexing.h>
#include <ddl/tensor/kernels/functors.h>

namespace ddl::cuda {
namespace {

using detail::strided_apply;

// dst[i] = D(src[i]); dst, src: the same shape, any strides (src may be expanded).
template <typename D, typename S>
struct CopyApply {
  D* dst;
  const S* src;
  __device__ __forceinline__ void operator()(const int64_t (&off)[2]) const {
    dst[off[0]] = CastFn<D, S>{}(src[off[1]]);
  }
};

template <typename T>
struct FillApply {
  T* dst;
  T value;
  __device__ __forceinline__ void operator()(const int64_t (&off)[1]) const { dst[off[0]] = value; }
};

void copy_cuda(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  const int device = dst.device().index;
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous()) {
    detail::DeviceGuard g(device);
    cudaStream_t s = detail::current_stream(device);
    DDL_CUDA_CHECK(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), dst.nbytes(), cudaMemcpyDeviceToDevice, s));
    return;
  }
  DDL_DISPATCH_ALL_AND_HALF(dst.dtype(), "copy", [&] {
    using D = scalar_t;
    DDL_DISPATCH_ALL_AND_HALF(src.dtype(), "copy", [&] {
      strided_apply<2>(device, {&dst, &src}, CopyApply<D, scalar_t>{dst.data<D>(), src.data<scalar_t>()}, "copy");
    });
  });
}

void fill_cuda(const Tensor& dst, double value) {
  DDL_DISPATCH_ALL_AND_HALF(dst.dtype(), "fill_", [&] {
    const FillApply<scalar_t> apply{dst.data<scalar_t>(), ::ddl::detail::value_as<scalar_t>(value)};
    strided_apply<1>(dst.device().index, {&dst}, apply, "fill_");
  });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::copy_kernel, CUDA, &copy_cuda);
DDL_REGISTER_KERNEL(kernels::fill_kernel, CUDA, &fill_cuda);

}  // namespace ddl::cuda
