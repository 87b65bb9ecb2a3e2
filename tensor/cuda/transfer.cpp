// Copies between the CPU and a GPU and between two GPUs: the source is made
// contiguous on its own device, its bytes move with cudaMemcpy*Async on the
// current stream, and dtype/stride conversion runs on the destination device
// (kernels::copy_kernel). Same-device copies are not here (tensor/cuda/copy.cu).
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include <ddl/tensor/core/copy.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cuda/common.h>
#include <ddl/tensor/cuda/runtime.h>

namespace ddl::detail {
namespace {
using cuda::detail::current_stream;
using cuda::detail::DeviceGuard;
using cuda::detail::raise_device_errors;
using cuda::detail::ScopedEvent;

void check_copy(cudaError_t err, const char* what, const Tensor& dst, const Tensor& src) {
  if (err == cudaSuccess) return;
  cudaGetLastError();
  DDL_CHECK(false, "copy ", describe(src), " -> ", describe(dst), ": ", what, " failed: ", cudaGetErrorString(err),
            " (", static_cast<int>(err), ")");
}

// Note [Transfer synchronisation]
// Host to device never blocks the host on earlier GPU work. From pinned memory
// the copy is plain DMA (the caller must not write the source before the stream
// gets there; the pinned cache holds the block until then). From pageable
// memory, cudaMemcpyAsync would stage the bytes itself, but the CUDA docs ("API
// synchronization behavior") let it synchronise the stream first, and with HMM
// it need not consume the source before returning. So ddl stages explicitly:
// the bytes are memcpy'd into a block of the pinned cache, which is DMA'd on
// the stream and reused only after that copy completed (an event, see
// pinned.cpp). The caller may free or overwrite the source as soon as the call
// returns. Sources above kMaxStagedBytes (rare: a whole dataset), or any source
// when no page-locked memory is left, skip staging and wait for an event
// recorded after their own copy.
// Device to host waits, but only for an event after the copy (never the whole
// device): the caller reads the result on the host right after (to_vector, item,
// print). That wait is a synchronisation point, so errors deferred by kernels are
// raised there (Note [Deferred device errors]).
constexpr size_t kMaxStagedBytes = size_t{256} << 20;

void host_to_device(const Tensor& dst, const Tensor& src) {
  const int dev = dst.device().index;
  DeviceGuard g(dev);
  cudaStream_t s = current_stream(dev);
  const size_t n = src.nbytes();
  if (n == 0) return;
  if (src.is_pinned()) {
    check_copy(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), n, cudaMemcpyHostToDevice, s),
               "cudaMemcpyAsync(host to device)", dst, src);
    pinned_record_use(src.raw_data(), s, dev);
    return;
  }
  Allocator* pinned = cuda_pinned_allocator();
  void* block = nullptr;
  if (n <= kMaxStagedBytes) {
    try {
      block = pinned->allocate(n);
    } catch (const Error&) {
      block = nullptr;  // no page-locked memory left: copy without staging below
    }
  }
  if (block) {
    // Returned to the cache on every path; reused only after the events recorded on it.
    std::unique_ptr<void, std::function<void(void*)>> stage(block, [pinned, n](void* p) { pinned->deallocate(p, n); });
    std::memcpy(stage.get(), src.raw_data(), n);
    check_copy(cudaMemcpyAsync(dst.raw_data(), stage.get(), n, cudaMemcpyHostToDevice, s),
               "cudaMemcpyAsync(host to device, staged)", dst, src);
    pinned_record_use(stage.get(), s, dev);
  } else {
    const ScopedEvent copied;
    check_copy(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), n, cudaMemcpyHostToDevice, s),
               "cudaMemcpyAsync(host to device)", dst, src);
    check_copy(cudaEventRecord(copied.get(), s), "cudaEventRecord", dst, src);
    check_copy(cudaEventSynchronize(copied.get()), "cudaEventSynchronize", dst, src);
  }
}

void device_to_host(const Tensor& dst, const Tensor& src) {
  const int dev = src.device().index;
  DeviceGuard g(dev);
  cudaStream_t s = current_stream(dev);
  const ScopedEvent copied;
  check_copy(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), src.nbytes(), cudaMemcpyDeviceToHost, s),
             "cudaMemcpyAsync(device to host)", dst, src);
  check_copy(cudaEventRecord(copied.get(), s), "cudaEventRecord", dst, src);
  check_copy(cudaEventSynchronize(copied.get()), "cudaEventSynchronize", dst, src);
  raise_device_errors(dev);
}

// The copy runs on the source device's current stream, after the destination's
// current stream reaches this point (its earlier work may still use dst's memory),
// and the destination's stream waits for it: both streams stay in order. The
// events are scoped: a failing call leaks neither.
void device_to_device(const Tensor& dst, const Tensor& src) {
  const int sd = src.device().index, dd = dst.device().index;
  cudaStream_t ss = current_stream(sd), ds = current_stream(dd);
  std::optional<ScopedEvent> dst_ready, done;
  {
    DeviceGuard g(dd);
    dst_ready.emplace();
    check_copy(cudaEventRecord(dst_ready->get(), ds), "cudaEventRecord", dst, src);
  }
  {
    DeviceGuard g(sd);
    check_copy(cudaStreamWaitEvent(ss, dst_ready->get(), 0), "cudaStreamWaitEvent", dst, src);
    check_copy(cudaMemcpyPeerAsync(dst.raw_data(), dd, src.raw_data(), sd, src.nbytes(), ss), "cudaMemcpyPeerAsync",
               dst, src);
    done.emplace();
    check_copy(cudaEventRecord(done->get(), ss), "cudaEventRecord", dst, src);
  }
  {
    DeviceGuard g(dd);
    check_copy(cudaStreamWaitEvent(ds, done->get(), 0), "cudaStreamWaitEvent", dst, src);
  }
}

}  // namespace

void cuda_copy_between_devices(const Tensor& dst, const Tensor& src) {
  DDL_ASSERT(dst.shape() == src.shape() && dst.device() != src.device(), "cuda copy: ", describe(dst), " <- ",
             describe(src));
  // Contiguous on the source device (also materialises expanded views).
  const Tensor s = src.contiguous();
  // The bytes land in dst itself when it has their layout, else in a staging buffer.
  const bool direct = dst.is_contiguous() && dst.dtype() == src.dtype();
  const Tensor staging = direct ? dst : empty(src.shape(), TensorOptions(src.dtype(), dst.device()));
  if (s.device().is_cpu()) {
    host_to_device(staging, s);
  } else if (dst.device().is_cpu()) {
    device_to_host(staging, s);
  } else {
    device_to_device(staging, s);
  }
  if (!direct) kernels::copy_kernel(dst.device())(dst, staging);
}

}  // namespace ddl::detail
