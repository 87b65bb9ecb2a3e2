// CPU copy (with dtype conversion through CastFn, tensor/kernels/functors.h, shared
// with CUDA) and fill.
#include <ddl/tensor/core/copy.h>
#include <ddl/tensor/core/factory_value.h>
#include <ddl/tensor/cpu/loops.h>
#include <ddl/tensor/kernels/functors.h>

namespace ddl::cpu {
namespace {

template <typename D, typename S>
void copy_typed(const Tensor& dst, const Tensor& src) {
  const CastFn<D, S> cast;
  StridedLoop<2> loop({&dst, &src});
  const bool contiguous = loop.inner_strides()[0] == sizeof(D) && loop.inner_strides()[1] == sizeof(S);
  loop.run([&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& st, int64_t n) {
    if (contiguous) {
      D* d = reinterpret_cast<D*>(p[0]);
      const S* s = reinterpret_cast<const S*>(p[1]);
      for (int64_t i = 0; i < n; ++i) d[i] = cast(s[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<D*>(p[0] + i * st[0]) = cast(*reinterpret_cast<const S*>(p[1] + i * st[1]));
    }
  });
}

void copy_cpu(const Tensor& dst, const Tensor& src) {
  DDL_DISPATCH_ALL_AND_HALF(dst.dtype(), "copy", [&] {
    using D = scalar_t;
    DDL_DISPATCH_ALL_AND_HALF(src.dtype(), "copy", [&] { copy_typed<D, scalar_t>(dst, src); });
  });
}

void fill_cpu(const Tensor& dst, double value) {
  DDL_DISPATCH_ALL_AND_HALF(dst.dtype(), "fill_", [&] {
    const scalar_t v = detail::value_as<scalar_t>(value);
    StridedLoop<1> loop({&dst});
    loop.run([&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& st, int64_t n) {
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<scalar_t*>(p[0] + i * st[0]) = v;
    });
  });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::copy_kernel, CPU, &copy_cpu);
DDL_REGISTER_KERNEL(kernels::fill_kernel, CPU, &fill_cpu);

}  // namespace ddl::cpu
