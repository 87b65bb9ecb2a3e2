// Which devices exist in this build and at run time, the public CUDA API
// (streams, events, memory statistics, TF32) and moving data between devices.
// Plain C++: CUDA handles appear as void*. In a build without CUDA every call
// that needs a GPU throws ddl::Error saying so; queries return 0/false.
#pragma once

#include <ddl/tensor/core/allocator.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl {

namespace cuda {
// False when the build has no CUDA backend or no GPU/driver is usable at run time.
bool is_available();
int device_count();

// TF32 tensor-core math for fp32 matmul/convolution (cuBLAS, cuDNN). Default
// false: fp32 results then match the CPU backend to ~1e-5.
void set_allow_tf32(bool allow);
bool allow_tf32();

// Memory held by tensors on `device` and cached by its allocator.
MemoryStats memory_stats(int device = 0);
// Returns every fully free cached segment on every device to the driver.
void empty_cache();
// Waits until all work queued on `device` is done.
void synchronize(int device = 0);

// A CUDA stream. The default-constructed Stream (handle nullptr) is the legacy
// default stream of device 0. Streams made by create() live until the process ends
// (like PyTorch's pool, they are never destroyed, so a handle never dangles).
class Stream {
 public:
  Stream() = default;
  Stream(int device, void* handle) : device_(device), handle_(handle) {}
  // A new non-blocking stream on `device`.
  static Stream create(int device = 0);
  int device() const { return device_; }
  void* handle() const { return handle_; }  // cudaStream_t
  // Blocks the host until the work queued so far on this stream is done.
  void synchronize() const;
  bool operator==(const Stream&) const = default;

 private:
  int device_ = 0;
  void* handle_ = nullptr;
};

// The stream this thread launches work on for `device` (the default stream unless set).
Stream current_stream(int device = 0);
// Makes `s` this thread's current stream for s.device().
void set_current_stream(const Stream& s);
// Marks t's memory as used by the work queued so far on `s` (PyTorch's
// Tensor.record_stream): once t is freed, the allocator reuses it only after that
// work is done. Needed when t was allocated on another stream than `s`.
void record_stream(const Tensor& t, const Stream& s);

// Sets the current stream for its lifetime and restores the previous one.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& s) : previous_(current_stream(s.device())) { set_current_stream(s); }
  ~StreamGuard() { set_current_stream(previous_); }
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
};

// A CUDA event with timing. Created lazily on the first record().
class Event {
 public:
  Event() = default;
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;

  // Marks the point reached so far by `s`.
  void record(const Stream& s);
  // Makes later work on `s` wait for the recorded point (no host wait).
  void block(const Stream& s) const;
  // Blocks the host until the recorded point is reached.
  void synchronize() const;
  // Milliseconds from this event to `end`; both recorded and completed.
  float elapsed_ms(const Event& end) const;
  bool recorded() const { return handle_ != nullptr; }

 private:
  int device_ = 0;
  void* handle_ = nullptr;  // cudaEvent_t
};
}  // namespace cuda

namespace detail {
// Page-locked host memory behind Tensor::pin_memory(); throws without CUDA or a GPU.
Allocator* pinned_allocator();
// True when `ptr` lies in a block from pinned_allocator().
bool is_pinned(const void* ptr);
}  // namespace detail

// Copies between tensors on different devices (same shape; dst contiguous or not).
void copy_between_devices(const Tensor& dst, const Tensor& src);

}  // namespace ddl
