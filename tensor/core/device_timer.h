// DeviceMark: a point in a device's stream of work, for timing that work without a host
// sync. On the CPU it is the host clock when recorded; on a GPU it is a timing event
// recorded on the current stream, so the time between two marks is the GPU's time
// between reaching them, whenever the host queued the work (as torch.cuda.Event(
// enable_timing=True)). Reading a GPU interval needs its work done: read after a host
// sync that covers both marks (reading a tensor's value is one), else the read waits.
#pragma once

#include <chrono>
#include <memory>

#include <ddl/tensor/core/device.h>
#include <ddl/tensor/core/devices.h>

namespace ddl {

class DeviceMark {
 public:
  DeviceMark() = default;  // not recorded
  // Marks the point reached so far: the host clock now (CPU), or the work queued so far
  // on d's current stream (CUDA; no host wait).
  static DeviceMark record(Device d);
  bool recorded() const { return recorded_; }
  Device device() const { return device_; }
  // Seconds from this mark to `later` (both recorded, on one device). On a GPU this waits
  // for both points to be reached: free after a sync that covers them.
  double seconds_until(const DeviceMark& later) const;

 private:
  bool recorded_ = false;
  Device device_;
  std::chrono::steady_clock::time_point host_{};
  std::shared_ptr<cuda::Event> event_;  // CUDA only; shared, so marks copy cheaply
};

}  // namespace ddl
