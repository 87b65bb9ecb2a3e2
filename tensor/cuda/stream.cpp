// The public stream and event API (tensor/core/devices.h) over the runtime, and
// device-wide synchronisation. Streams made here are never destroyed: a handle
// held by a StreamGuard or a process group stays valid for the whole run.
#include <ddl/tensor/core/devices.h>
#include <ddl/tensor/cuda/common.h>
#include <ddl/tensor/cuda/runtime.h>

namespace ddl::cuda {
namespace {
cudaStream_t raw(const Stream& s) { return static_cast<cudaStream_t>(s.handle()); }
cudaEvent_t raw_event(void* e) { return static_cast<cudaEvent_t>(e); }
}  // namespace

void synchronize(int device) {
  ::ddl::detail::check_cuda_device(device, "cuda::synchronize");
  detail::DeviceGuard g(device);
  DDL_CUDA_CHECK(cudaDeviceSynchronize());
  detail::raise_device_errors(device);  // Note [Deferred device errors]
}

Stream Stream::create(int device) {
  ::ddl::detail::check_cuda_device(device, "cuda::Stream::create");
  detail::DeviceGuard g(device);
  cudaStream_t s = nullptr;
  // Non-blocking: it does not wait on the legacy default stream (order with events).
  DDL_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(device, s);
}

void Stream::synchronize() const {
  detail::DeviceGuard g(device_);  // the default stream (nullptr) is the current device's
  DDL_CUDA_CHECK(cudaStreamSynchronize(raw(*this)));
  detail::raise_device_errors(device_);
}

Stream current_stream(int device) {
  ::ddl::detail::check_cuda_device(device, "cuda::current_stream");
  return Stream(device, detail::current_stream(device));
}

void set_current_stream(const Stream& s) {
  ::ddl::detail::check_cuda_device(s.device(), "cuda::set_current_stream");
  detail::set_current_stream(s.device(), raw(s));
}

void record_stream(const Tensor& t, const Stream& s) {
  DDL_CHECK(t.defined() && t.device().is_cuda(), "cuda::record_stream: expected a CUDA tensor, got ",
            t.defined() ? describe(t) : std::string("an undefined tensor"));
  DDL_CHECK(t.device().index == s.device(), "cuda::record_stream: the tensor is on ", t.device(),
            " but the stream on cuda:", s.device());
  if (t.storage()->nbytes() == 0) return;
  ::ddl::detail::cuda_record_stream(t.storage()->data(), s.device(), s.handle());
}

Event::~Event() {
  if (handle_) cudaEventDestroy(raw_event(handle_));  // no throw from a destructor
}

Event::Event(Event&& other) noexcept : device_(other.device_), handle_(other.handle_) { other.handle_ = nullptr; }

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (handle_) cudaEventDestroy(raw_event(handle_));
    device_ = other.device_;
    handle_ = other.handle_;
    other.handle_ = nullptr;
  }
  return *this;
}

void Event::record(const Stream& s) {
  ::ddl::detail::check_cuda_device(s.device(), "cuda::Event::record");
  detail::DeviceGuard g(s.device());
  if (!handle_) {
    cudaEvent_t e = nullptr;
    DDL_CUDA_CHECK(cudaEventCreate(&e));  // with timing, for elapsed_ms
    handle_ = e;
    device_ = s.device();
  }
  DDL_CHECK(device_ == s.device(), "cuda::Event::record: event belongs to cuda:", device_,
            ", stream to cuda:", s.device());
  DDL_CUDA_CHECK(cudaEventRecord(raw_event(handle_), raw(s)));
}

// As in PyTorch, waiting on an event that was never recorded is a no-op.
void Event::block(const Stream& s) const {
  if (!handle_) return;
  detail::DeviceGuard g(s.device());
  DDL_CUDA_CHECK(cudaStreamWaitEvent(raw(s), raw_event(handle_), 0));
}

void Event::synchronize() const {
  if (!handle_) return;
  DDL_CUDA_CHECK(cudaEventSynchronize(raw_event(handle_)));
  detail::raise_device_errors(device_);
}

float Event::elapsed_ms(const Event& end) const {
  DDL_CHECK(handle_ && end.handle_, "cuda::Event::elapsed_ms: both events must be recorded first");
  float ms = 0;
  DDL_CUDA_CHECK(cudaEventElapsedTime(&ms, raw_event(handle_), raw_event(end.handle_)));
  return ms;
}

}  // namespace ddl::cuda
