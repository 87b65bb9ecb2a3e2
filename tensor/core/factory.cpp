// Factories: allocation plus a fill or a copy.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include <ddl/tensor/core/checked_shape.h>
#include <ddl/tensor/core/copy.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/factory_value.h>

namespace ddl {

namespace detail {

void refuse_requires_grad(const TensorOptions& opts, const char* op) {
  DDL_CHECK(!opts.requires_grad(), op,
            ": a Tensor cannot require grad (ddl::Tensor has no autograd state); call ddl::autograd::", op,
            " (autograd/factory.h), which returns a Variable that requires grad, as torch::", op, " does");
}

Tensor empty(const char* op, const Shape& shape, TensorOptions opts) {
  refuse_requires_grad(opts, op);
  for (int64_t d : shape) DDL_CHECK(d >= 0, op, ": negative extent in shape ", shape);
  const int64_t nbytes = checked_nbytes(shape, dtype_size(opts.dtype()), op);
  auto storage = std::make_shared<Storage>(static_cast<size_t>(nbytes), opts.device());
  return Tensor(std::move(storage), shape, contiguous_strides(shape), 0, opts.dtype());
}

Tensor full(const char* op, const Shape& shape, double value, TensorOptions opts) {
  Tensor t = empty(op, shape, opts);
  t.fill_(value);
  return t;
}

void check_value_fits(double value, DType d, const char* op) {
  bool fits = true;
  if (d == DType::Bool) {
    fits = true;
  } else if (is_floating(d)) {
    const double max = d == DType::Float16    ? 65504.0
                       : d == DType::BFloat16 ? 0x1.fep127
                       : d == DType::Float32  ? static_cast<double>(std::numeric_limits<float>::max())
                                              : std::numeric_limits<double>::max();
    fits = !std::isfinite(value) || std::fabs(value) <= max;
  } else {
    const double lo = d == DType::UInt8 ? -255.0 : integral_range(d).first, hi = integral_range(d).second;
    fits = value >= lo && (d == DType::Int64 ? value < hi : value <= hi) &&
           (d != DType::UInt8 || value >= 0 || value == std::trunc(value));
  }
  DDL_CHECK(fits, op, ": value ", value, " cannot be converted to ", d, " without overflow");
}

}  // namespace detail

Tensor empty(const Shape& shape, TensorOptions opts) { return detail::empty("empty", shape, opts); }
Tensor zeros(const Shape& shape, TensorOptions opts) { return detail::full("zeros", shape, 0.0, opts); }
Tensor ones(const Shape& shape, TensorOptions opts) { return detail::full("ones", shape, 1.0, opts); }
Tensor full(const Shape& shape, double value, TensorOptions opts) {
  detail::check_value_fits(value, opts.dtype(), "full");
  return detail::full("full", shape, value, opts);
}

Tensor arange(double start, double end, double step, TensorOptions opts) {
  detail::refuse_requires_grad(opts, "arange");
  DDL_CHECK(std::isfinite(start) && std::isfinite(end), "arange: start ", start, " and end ", end, " must be finite");
  // 16-bit floats are computed in float32 and rounded, as PyTorch accumulates them in float.
  if (is_reduced_float(opts.dtype()))
    return arange(start, end, step, TensorOptions(DType::Float32, opts.device())).to(opts.dtype());
  // An integer dtype takes start, end and step truncated to integers (PyTorch's
  // Scalar::to<int64_t>), so int64 with step 0.5 has step 0; its length also
  // comes from the truncated bounds for int64 (aten RangeFactories.cpp).
  const bool integral = !is_floating(opts.dtype()) && opts.dtype() != DType::Bool;
  const double xstart = integral ? std::trunc(start) : start, xend = integral ? std::trunc(end) : end;
  const double xstep = integral ? std::trunc(step) : step;
  if (integral) {  // the values are computed in int64, as aten's integer arange does
    for (const auto& [what, v] : {std::pair{"start", xstart}, std::pair{"end", xend}, std::pair{"step", xstep}})
      DDL_CHECK(v >= -9223372036854775808.0 && v < 9223372036854775808.0, "arange: ", what, " ", v,
                " cannot be converted to int64 without overflow");
  }
  DDL_CHECK(xstep != 0, "arange: step must be nonzero, got ", step,
            integral ? " (truncated for an integer dtype)" : "");
  DDL_CHECK((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart), "arange: end ", end,
            " is on the wrong side of start ", start, " for step ", step,
            " (PyTorch: upper bound and larger bound inconsistent with step sign)");
  const double span = opts.dtype() == DType::Int64 ? (xend - xstart) / xstep : (end - start) / step;
  // 2^63 is exact in double; a longer range has no int64 length (torch: "invalid size, possible overflow?").
  DDL_CHECK(span < 9223372036854775808.0, "arange: [", start, ", ", end, ") in steps of ", step,
            " has too many elements for an int64 size");
  const int64_t n = span > 0 ? static_cast<int64_t>(std::ceil(span)) : 0;
  Tensor cpu_t = empty({n}, opts.dtype());
  DDL_DISPATCH_NUMERIC(opts.dtype(), "arange", [&] {
    scalar_t* p = cpu_t.data<scalar_t>();
    // Integers in int64 arithmetic, wrapped into narrower types as in PyTorch.
    if constexpr (std::is_integral_v<scalar_t> && !std::is_same_v<scalar_t, bool>) {
      const int64_t s0 = static_cast<int64_t>(xstart), ds = static_cast<int64_t>(xstep);
      for (int64_t i = 0; i < n; ++i)
        p[i] = static_cast<scalar_t>(
            static_cast<int64_t>(static_cast<uint64_t>(s0) + static_cast<uint64_t>(i) * static_cast<uint64_t>(ds)));
    } else {
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<scalar_t>(xstart + static_cast<double>(i) * xstep);
    }
  });
  return cpu_t.to(opts.device());
}

Tensor arange(int64_t end, TensorOptions opts) {
  return arange(0.0, static_cast<double>(end), 1.0, opts.has_dtype() ? opts : opts.dtype(DType::Int64));
}

Tensor empty_like(const Tensor& t) { return detail::empty("empty_like", t.shape(), {t.dtype(), t.device()}); }
Tensor zeros_like(const Tensor& t) { return detail::full("zeros_like", t.shape(), 0.0, {t.dtype(), t.device()}); }
Tensor ones_like(const Tensor& t) { return detail::full("ones_like", t.shape(), 1.0, {t.dtype(), t.device()}); }
Tensor full_like(const Tensor& t, double value) {
  DDL_CHECK(t.defined(), "full_like: undefined tensor");
  detail::check_value_fits(value, t.dtype(), "full_like");
  return detail::full("full_like", t.shape(), value, {t.dtype(), t.device()});
}
Tensor empty_like(const Tensor& t, TensorOptions opts) {
  DDL_CHECK(t.defined(), "empty_like: undefined tensor");
  return detail::empty("empty_like", t.shape(), opts.merged_with(t.dtype(), t.device()));
}
Tensor zeros_like(const Tensor& t, TensorOptions opts) {
  DDL_CHECK(t.defined(), "zeros_like: undefined tensor");
  return detail::full("zeros_like", t.shape(), 0.0, opts.merged_with(t.dtype(), t.device()));
}
Tensor ones_like(const Tensor& t, TensorOptions opts) {
  DDL_CHECK(t.defined(), "ones_like: undefined tensor");
  return detail::full("ones_like", t.shape(), 1.0, opts.merged_with(t.dtype(), t.device()));
}
Tensor full_like(const Tensor& t, double value, TensorOptions opts) {
  DDL_CHECK(t.defined(), "full_like: undefined tensor");
  opts = opts.merged_with(t.dtype(), t.device());
  detail::check_value_fits(value, opts.dtype(), "full_like");
  return detail::full("full_like", t.shape(), value, opts);
}

Tensor eye(int64_t n, TensorOptions opts) { return eye(n, n, opts); }
Tensor eye(int64_t n, int64_t m, TensorOptions opts) {
  DDL_CHECK(n >= 0, "eye: n must be greater or equal to 0, got ", n);
  DDL_CHECK(m >= 0, "eye: m must be greater or equal to 0, got ", m);
  Tensor t = detail::full("eye", {n, m}, 0.0, opts);
  // The diagonal is every (m + 1)-th element of the row-major buffer.
  if (n > 0 && m > 0) t.as_strided({std::min(n, m)}, {m + 1}, 0).fill_(1.0);
  return t;
}

Tensor scalar_tensor(double value, TensorOptions opts) { return detail::full("scalar_tensor", Shape{}, value, opts); }

template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape) {
  DDL_CHECK(static_cast<int64_t>(values.size()) == checked_numel(shape, "from_vector"), "from_vector: ", values.size(),
            " values do not fill shape ", shape, " (", shape.numel(), " elements)");
  Tensor t = detail::empty("from_vector", shape, dtype_of<T>);
  if (!values.empty()) std::memcpy(t.raw_data(), values.data(), values.size() * sizeof(T));
  return t;
}

Tensor from_blob(void* data, const Shape& shape, DType dtype, std::function<void(void*)> deleter) {
  for (int64_t d : shape) DDL_CHECK(d >= 0, "from_blob: negative extent in shape ", shape);
  const size_t nbytes = static_cast<size_t>(checked_nbytes(shape, dtype_size(dtype), "from_blob"));
  DDL_CHECK(data != nullptr || nbytes == 0, "from_blob: null data for shape ", shape);
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
template Tensor from_vector<int8_t>(const std::vector<int8_t>&, const Shape&);
template Tensor from_vector<int16_t>(const std::vector<int16_t>&, const Shape&);
template std::vector<float> to_vector<float>(const Tensor&);
template std::vector<double> to_vector<double>(const Tensor&);
template std::vector<int64_t> to_vector<int64_t>(const Tensor&);
template std::vector<int32_t> to_vector<int32_t>(const Tensor&);
template std::vector<uint8_t> to_vector<uint8_t>(const Tensor&);
template std::vector<int8_t> to_vector<int8_t>(const Tensor&);
template std::vector<int16_t> to_vector<int16_t>(const Tensor&);

}  // namespace ddl
