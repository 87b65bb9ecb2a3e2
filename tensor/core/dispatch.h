// Note [Kernel dispatch]
// Every op that touches memory goes through a Kernel slot: a table of one
// function pointer per device type. The op's frontend (tensor/ops/<op>.cpp)
// checks arguments, allocates outputs and calls `slot(device)(args...)`; each
// backend registers its implementation from its own file with
// DDL_REGISTER_KERNEL (tensor/cpu/<op>.cpp, later tensor/cuda/<op>.cu).
// Adding an op touches its frontend and one kernel file per device; adding a
// device touches its own folder and tensor/core/devices.cpp, nowhere else.
// Registration runs from static initialisers of files nothing else refers to, so
// libddl.so takes the layer archives whole (link_whole, docs/build.md "Layering").
#pragma once

#include <ddl/base/error.h>
#include <ddl/tensor/core/device.h>

namespace ddl {

template <typename Fn>
class Kernel {
 public:
  // constexpr so slots are constant-initialised, before any registration runs.
  constexpr explicit Kernel(const char* name) : name_(name) {}

  void set(DeviceType type, Fn* fn) { fns_[static_cast<int>(type)] = fn; }

  Fn* operator()(Device device) const {
    Fn* fn = fns_[static_cast<int>(device.type)];
    DDL_CHECK(fn != nullptr, name_, ": no kernel is registered for device ", device,
              device.is_cuda() ? " (this build has no CUDA kernel for it)" : "");
    return fn;
  }

 private:
  const char* name_;
  Fn* fns_[kNumDeviceTypes] = {};
};

}  // namespace ddl

#define DDL_DECLARE_KERNEL(slot, fn_type) extern ::ddl::Kernel<fn_type> slot
#define DDL_DEFINE_KERNEL(slot, fn_type) constinit ::ddl::Kernel<fn_type> slot(#slot)
#define DDL_CONCAT_IMPL_(a, b) a##b
#define DDL_CONCAT_(a, b) DDL_CONCAT_IMPL_(a, b)
#define DDL_REGISTER_KERNEL(slot, device_type, fn)                                           \
  [[maybe_unused]] static const bool DDL_CONCAT_(ddl_kernel_registered_, __COUNTER__) = [] { \
    slot.set(::ddl::DeviceType::device_type, fn);                                            \
    return true;                                                                             \
  }()
