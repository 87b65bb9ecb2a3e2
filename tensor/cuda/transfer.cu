// Copies between the CPU and a GPU and between two GPUs: the source is made
// contiguous on its own device, its bytes move with cudaMemcpy*Async on the
// current stream, and dtype/stride conversion runs on the destination device
// (kernels::copy_kernel). Same-device copies are not here (tensor/cuda/copy.cu).
#include "tensor/copy.h"
#include "tensor/cuda/common.h"
#include "tensor/cuda/runtime.h"
#include "tensor/factory.h"

namespace ddl::detail {
namespace {
using cuda::detail::current_stream;
using cuda::detail::DeviceGuard;

void check_copy(cudaError_t err, const char* what, const Tensor& dst, const Tensor& src) {
  if (err == cudaSuccess) return;
  cudaGetLastError();
  DDL_CHECK(false, "copy ", describe(src), " -> ", describe(dst), ": ", what, " failed: ", cudaGetErrorString(err),
            " (", static_cast<int>(err), ")");
}

// Note [Transfer synchronisation]
// Host to device: from pageable memory the host waits for the copy, so the
// caller may reuse or free the source at once; from pinned memory it returns
// at once (the caller must not write the source before the stream gets there;
// the pinned cache holds the block until then). Device to host always waits:
// the caller reads the result on the host right after (to_vector, item, print).
void host_to_device(const Tensor& dst, const Tensor& src) {
  const int dev = dst.device().index;
  DeviceGuard g(dev);
  cudaStream_t s = current_stream(dev);
  check_copy(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), src.nbytes(), cudaMemcpyHostToDevice, s),
             "cudaMemcpyAsync(host to device)", dst, src);
  if (src.is_pinned()) {
    pinned_record_use(src.raw_data(), s, dev);
  } else {
    check_copy(cudaStreamSynchronize(s), "cudaStreamSynchronize", dst, src);
  }
}

void device_to_host(const Tensor& dst, const Tensor& src) {
  const int dev = src.device().index;
  DeviceGuard g(dev);
  cudaStream_t s = current_stream(dev);
  check_copy(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), src.nbytes(), cudaMemcpyDeviceToHost, s),
             "cudaMemcpyAsync(device to host)", dst, src);
  check_copy(cudaStreamSynchronize(s), "cudaStreamSynchronize", dst, src);
}

// The copy runs on the source device's current stream, after the destination's
// current stream reaches this point (its earlier work may still use dst's memory),
// and the destination's stream waits for it: both streams stay in order.
void device_to_device(const Tensor& dst, const Tensor& src) {
  const int sd = src.device().index, dd = dst.device().index;
  cudaStream_t ss = current_stream(sd), ds = current_stream(dd);
  cudaEvent_t dst_ready = nullptr, done = nullptr;
  {
    DeviceGuard g(dd);
    check_copy(cudaEventCreateWithFlags(&dst_ready, cudaEventDisableTiming), "cudaEventCreate", dst, src);
    check_copy(cudaEventRecord(dst_ready, ds), "cudaEventRecord", dst, src);
  }
  {
    DeviceGuard g(sd);
    check_copy(cudaStreamWaitEvent(ss, dst_ready, 0), "cudaStreamWaitEvent", dst, src);
    check_copy(cudaMemcpyPeerAsync(dst.raw_data(), dd, src.raw_data(), sd, src.nbytes(), ss), "cudaMemcpyPeerAsync",
               dst, src);
    check_copy(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate", dst, src);
    check_copy(cudaEventRecord(done, ss), "cudaEventRecord", dst, src);
  }
  {
    DeviceGuard g(dd);
    check_copy(cudaStreamWaitEvent(ds, done, 0), "cudaStreamWaitEvent", dst, src);
  }
  // Destroying an event whose waits are queued is allowed: resources go once it completes.
  cudaEventDestroy(dst_ready);
  cudaEventDestroy(done);
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
