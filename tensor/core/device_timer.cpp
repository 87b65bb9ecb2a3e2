// DeviceMark over the host clock and the public CUDA event API (tensor/core/devices.h).
#include <ddl/base/error.h>
#include <ddl/tensor/core/device_timer.h>

namespace ddl {

DeviceMark DeviceMark::record(Device d) {
  DeviceMark m;
  m.recorded_ = true;
  m.device_ = d;
  if (d.is_cpu()) {
    m.host_ = std::chrono::steady_clock::now();
    return m;
  }
  m.event_ = std::make_shared<cuda::Event>();
  m.event_->record(cuda::current_stream(d.index));
  return m;
}

double DeviceMark::seconds_until(const DeviceMark& later) const {
  DDL_CHECK(recorded_ && later.recorded_, "DeviceMark::seconds_until: both marks must be recorded");
  DDL_CHECK(device_ == later.device_, "DeviceMark::seconds_until: marks on ", device_, " and ", later.device_);
  if (device_.is_cpu()) return std::chrono::duration<double>(later.host_ - host_).count();
  // cudaEventElapsedTime fails on an event not yet reached: wait (at once when reached).
  event_->synchronize();
  later.event_->synchronize();
  return static_cast<double>(event_->elapsed_ms(*later.event_)) / 1e3;
}

}  // namespace ddl
