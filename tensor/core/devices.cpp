// The device registry: the one place that knows which device types this build
// has. It is the only `#if DDL_HAVE_CUDA` outside tensor/cuda/. In a CUDA build
// the ddl::cuda API is implemented in tensor/cuda/*.cu; here are its CPU-only stubs.
#include <atomic>

#include <ddl/ddl_config.h>
#include <ddl/tensor/core/allocator.h>
#include <ddl/tensor/core/devices.h>

#if DDL_HAVE_CUDA
#include <ddl/tensor/cuda/runtime.h>
#endif

namespace ddl {

namespace cuda {
namespace {
std::atomic<bool> tf32_allowed{false};
}  // namespace

void set_allow_tf32(bool allow) { tf32_allowed.store(allow, std::memory_order_relaxed); }
bool allow_tf32() { return tf32_allowed.load(std::memory_order_relaxed); }

#if DDL_HAVE_CUDA
int device_count() { return detail::cuda_device_count(); }
MemoryStats memory_stats(int device) {
  detail::check_cuda_device(device, "cuda::memory_stats");
  return detail::cuda_memory_stats(device);
}
void empty_cache() {
  if (device_count() > 0) detail::cuda_empty_cache();
}
#else
// See the header: without CUDA, queries answer "none" and GPU work throws.
#define DDL_NO_CUDA(op) \
  ::ddl::detail::throw_error(__FILE__, __LINE__, op ": ddl was built without CUDA (-Dcuda=disabled or no toolkit)")
int device_count() { return 0; }
MemoryStats memory_stats(int) { DDL_NO_CUDA("cuda::memory_stats"); }
void empty_cache() {}
void synchronize(int) { DDL_NO_CUDA("cuda::synchronize"); }
Stream Stream::create(int) { DDL_NO_CUDA("cuda::Stream::create"); }
void Stream::synchronize() const { DDL_NO_CUDA("cuda::Stream::synchronize"); }
Stream current_stream(int) { DDL_NO_CUDA("cuda::current_stream"); }
void set_current_stream(const Stream&) { DDL_NO_CUDA("cuda::set_current_stream"); }
void record_stream(const Tensor&, const Stream&) { DDL_NO_CUDA("cuda::record_stream"); }
Event::~Event() = default;
Event::Event(Event&& other) noexcept : device_(other.device_), handle_(other.handle_) { other.handle_ = nullptr; }
Event& Event::operator=(Event&& other) noexcept {
  device_ = other.device_;
  handle_ = other.handle_;
  other.handle_ = nullptr;
  return *this;
}
void Event::record(const Stream&) { DDL_NO_CUDA("cuda::Event::record"); }
void Event::block(const Stream&) const { DDL_NO_CUDA("cuda::Event::block"); }
void Event::synchronize() const { DDL_NO_CUDA("cuda::Event::synchronize"); }
float Event::elapsed_ms(const Event&) const { DDL_NO_CUDA("cuda::Event::elapsed_ms"); }
#endif
bool is_available() { return device_count() > 0; }
}  // namespace cuda

Allocator* allocator_for(Device d) {
  if (d.is_cpu()) return cpu::allocator();
#if DDL_HAVE_CUDA
  detail::check_cuda_device(d.index, "allocate");
  return detail::cuda_allocator(d.index);
#else
  DDL_CHECK(false, "CUDA tensor requested on ", d, " but ddl was built without CUDA (-Dcuda=disabled or no toolkit)");
  return nullptr;
#endif
}

void copy_between_devices(const Tensor& dst, const Tensor& src) {
#if DDL_HAVE_CUDA
  detail::cuda_copy_between_devices(dst, src);
#else
  DDL_CHECK(false, "copy: moving data from ", src.device(), " to ", dst.device(),
            " needs CUDA, but ddl was built without it");
#endif
}

namespace detail {
#if DDL_HAVE_CUDA
Allocator* pinned_allocator() { return cuda_pinned_allocator(); }
bool is_pinned(const void* ptr) { return cuda_is_pinned(ptr); }
#else
Allocator* pinned_allocator() {
  DDL_CHECK(false, "pin_memory: page-locked memory needs CUDA, but ddl was built without it");
  return nullptr;
}
bool is_pinned(const void*) { return false; }
#endif
}  // namespace detail

}  // namespace ddl
