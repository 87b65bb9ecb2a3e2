// Factories: allocation plus a fill or a copy.
#include "tensor/factory.h"

#include <cmath>
#include <cstring>

#include "tensor/copy.h"

namespace ddl {

Tensor empty(const Shape& shape, TensorOptions opts) {
  for (int64_t d : shape) DDL_CHECK(d >= 0, "empty: negative extent in shape ", shape);
  const size_t nbytes = static_cast<size_t>(shape.numel()) * dtype_size(opts.dtype);
  auto storage = std::make_shared<Storage>(nbytes, opts.device);
  return Tensor(std::move(storage), shape, contiguous_strides(shape), 0, opts.dtype);
}

Tensor zeros(const Shape& shape, TensorOptions opts) { return full(shape, 0.0, opts); }
Tensor ones(const Shape& shape, TensorOptions opts) { return full(shape, 1.0, opts); }

Tensor full(const Shape& shape, double value, TensorOptions opts) {
  Tensor t = empty(shape, opts);
  t.fill_(value);
  return t;
}

Tensor arange(double start, double end, double step, TensorOptions opts) {
  DDL_CHECK(step != 0, "arange: step must be nonzero");
  const double span = (end - start) / step;
  const int64_t n = span > 0 ? static_cast<int64_t>(std::ceil(span)) : 0;
  Tensor cpu_t = empty({n}, opts.dtype);
  DDL_DISPATCH_NUMERIC(opts.dtype, "arange", [&] {
    scalar_t* p = cpu_t.data<scalar_t>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<scalar_t>(start + static_cast<double>(i) * step);
  });
  return cpu_t.to(opts.device);
}

Tensor arange(int64_t end, TensorOptions opts) { return arange(0.0, static_cast<double>(end), 1.0, opts); }

Tensor empty_like(const Tensor& t) { return empty(t.shape(), TensorOptions(t.dtype(), t.device())); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), TensorOptions(t.dtype(), t.device())); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), TensorOptions(t.dtype(), t.device())); }
Tensor full_like(const Tensor& t, double value) { return full(t.shape(), value, TensorOptions(t.dtype(), t.device())); }
Tensor scalar_tensor(double value, TensorOptions opts) { return full(Shape{}, value, opts); }

template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape) {
  DDL_CHECK(static_cast<int64_t>(values.size()) == shape.numel(), "from_vector: ", values.size(),
            " values do not fill shape ", shape, " (", shape.numel(), " elements)");
  Tensor t = empty(shape, dtype_of<T>);
  if (!values.empty()) std::memcpy(t.raw_data(), values.data(), values.size() * sizeof(T));
  return t;
}

Tensor from_blob(void* data, const Shape& shape, DType dtype, std::function<void(void*)> deleter) {
  DDL_CHECK(data != nullptr || shape.numel() == 0, "from_blob: null data for shape ", shape);
  const size_t nbytes = static_cast<size_t>(shape.numel()) * dtype_size(dtype);
  auto storage = std::make_shared<Storage>(data, nbytes, Device::cpu(), std::move(deleter));
  return Tensor(std::move(storage), shape, contiguous_strides(shape), 0, dtype);
}

template <typename T>
std::vector<T> to_vector(const Tensor& t) {
  DDL_CHECK(t.defined(), "to_vector: undefined tensor");
  const Tensor c = t.to(Device::cpu()).to(dtype_of<T>).contiguous();
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.numel());
}

// Explicit instantiations: the element types tensors hold.
template Tensor from_vector<float>(const std::vector<float>&, const Shape&);
template Tensor from_vector<double>(const std::vector<double>&, const Shape&);
template Tensor from_vector<int64_t>(const std::vector<int64_t>&, const Shape&);
template Tensor from_vector<int32_t>(const std::vector<int32_t>&, const Shape&);
template Tensor from_vector<uint8_t>(const std::vector<uint8_t>&, const Shape&);
template std::vector<float> to_vector<float>(const Tensor&);
template std::vector<double> to_vector<double>(const Tensor&);
template std::vector<int64_t> to_vector<int64_t>(const Tensor&);
template std::vector<int32_t> to_vector<int32_t>(const Tensor&);
template std::vector<uint8_t> to_vector<uint8_t>(const Tensor&);

}  // namespace ddl
