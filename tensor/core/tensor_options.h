// TensorOptions: the dtype, device and requires_grad a factory is asked for, in the form of
// LibTorch's c10::TensorOptions: `dtype(kFloat64).device(Device::cuda()).requires_grad(true)`.
// A setter returns a changed copy, so chains start from a temporary or a const object; a field
// never set reads as the default (float32, cpu, false), and has_dtype() / has_device() tell the
// *_like factories which fields to take from their tensor. ddl::Tensor has no autograd state,
// so the tensor factories refuse requires_grad(true), as ATen's at:: factories do; the
// ddl::autograd factories (autograd/factory.h) return a Variable that requires grad.
#pragma once

#include <ddl/tensor/core/device.h>
#include <ddl/tensor/core/dtype.h>

namespace ddl {

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType t) : dtype_(t), has_dtype_(true) {}     // NOLINT: implicit so `zeros(s, kInt64)` reads well
  TensorOptions(Device d) : device_(d), has_device_(true) {}  // NOLINT
  TensorOptions(DType t, Device d) : dtype_(t), device_(d), has_dtype_(true), has_device_(true) {}

  TensorOptions dtype(DType t) const {
    TensorOptions o = *this;
    o.dtype_ = t;
    o.has_dtype_ = true;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    o.has_device_ = true;
    return o;
  }
  TensorOptions requires_grad(bool r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    return o;
  }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  bool requires_grad() const { return requires_grad_; }
  bool has_dtype() const { return has_dtype_; }
  bool has_device() const { return has_device_; }
  // These options with the unset dtype and device taken from the given ones (what *_like does).
  TensorOptions merged_with(DType t, Device d) const {
    TensorOptions o = *this;
    if (!has_dtype_) o = o.dtype(t);
    if (!has_device_) o = o.device(d);
    return o;
  }

 private:
  DType dtype_ = DType::Float32;
  Device device_ = Device::cpu();
  bool has_dtype_ = false;
  bool has_device_ = false;
  bool requires_grad_ = false;
};

// The starting points of a chain, as torch::dtype(), torch::device(), torch::requires_grad().
inline TensorOptions dtype(DType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

namespace detail {
// Throws, naming `op`, when opts ask a Tensor factory for requires_grad (see the header comment).
void refuse_requires_grad(const TensorOptions& opts, const char* op);
}  // namespace detail

}  // namespace ddl
