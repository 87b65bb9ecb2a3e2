// Deferred device errors (Note [Deferred device errors] in tensor/cuda/common.h):
// one DeviceErrorRecord per GPU in mapped page-locked memory, and the host side
// that raises it. Two kinds share the record (common.h has no kind field):
// cross-entropy's target records (inner >= 1: positions per sample) and index
// records (inner == 0: `value` outside [0, classes), as sort_backward's check).
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include <ddl/tensor/cuda/common.h>
#include <ddl/tensor/cuda/runtime.h>
#include <ddl/tensor/kernels/softmax_functors.h>

namespace ddl::cuda::detail {
namespace {

struct Mapped {
  DeviceErrorRecord* host = nullptr;    // what the CPU reads
  DeviceErrorRecord* device = nullptr;  // the same memory as the GPU addresses it
};

std::mutex& mu() {
  static auto* m = new std::mutex;
  return *m;
}
// Leaked on purpose (kernels may still write after static destruction began).
std::vector<Mapped>& records() {
  static auto* r = new std::vector<Mapped>(static_cast<size_t>(::ddl::detail::cuda_device_count()));
  return *r;
}
// Read without the lock on the hot path: set once per device, never freed.
std::vector<std::atomic<const Mapped*>>& published() {
  static auto* p = new std::vector<std::atomic<const Mapped*>>(static_cast<size_t>(::ddl::detail::cuda_device_count()));
  return *p;
}
std::vector<std::string>& op_names() {
  static auto* n = new std::vector<std::string>;
  return *n;
}

}  // namespace

DeviceErrorRecord* device_error_record(int device) {
  if (const Mapped* m = published().at(static_cast<size_t>(device)).load(std::memory_order_acquire)) return m->device;
  std::lock_guard<std::mutex> lock(mu());
  Mapped& m = records().at(static_cast<size_t>(device));
  if (!m.device) {
    DeviceGuard g(device);
    void* p = nullptr;
    // Portable: any GPU may write it; mapped: kernels address it directly.
    DDL_CUDA_CHECK(cudaHostAlloc(&p, sizeof(DeviceErrorRecord), cudaHostAllocMapped | cudaHostAllocPortable));
    m.host = static_cast<DeviceErrorRecord*>(p);
    *m.host = DeviceErrorRecord{};
    void* d = nullptr;
    DDL_CUDA_CHECK(cudaHostGetDevicePointer(&d, p, 0));
    m.device = static_cast<DeviceErrorRecord*>(d);
    published()[static_cast<size_t>(device)].store(&m, std::memory_order_release);
  }
  return m.device;
}

int device_error_op_id(const char* op) {
  std::lock_guard<std::mutex> lock(mu());
  auto& names = op_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == op) return static_cast<int>(i);
  names.emplace_back(op);
  return static_cast<int>(names.size() - 1);
}

void raise_device_errors(int device) {
  if (device < 0 || static_cast<size_t>(device) >= published().size()) return;
  const Mapped* m = published()[static_cast<size_t>(device)].load(std::memory_order_acquire);
  DeviceErrorRecord* r = m ? m->host : nullptr;
  if (!r || *static_cast<volatile int*>(&r->flag) == 0) return;  // the common case: no CUDA call
  std::atomic_thread_fence(std::memory_order_acquire);           // the fields were written before the flag
  const DeviceErrorRecord e = *r;
  std::string op;
  {
    std::lock_guard<std::mutex> lock(mu());
    op = e.op >= 0 && static_cast<size_t>(e.op) < op_names().size() ? op_names()[static_cast<size_t>(e.op)]
                                                                    : "cross_entropy";
    *r = DeviceErrorRecord{};  // raised once: later calls on this GPU start clean
  }
  const std::string where = " (found on cuda:" + std::to_string(device) + " by an earlier call)";
  // Worded as the CPU's check of the same index (tensor/cpu/sort.cpp), plus where it was found.
  DDL_CHECK(e.inner != 0, op, ": index ", e.value, " out of range [0, ", e.classes, ")", where);
  const int64_t S = e.inner > 0 ? e.inner : 1;
  nll_math::target_error(e.value, e.index / S, e.index % S, S, e.classes, (op + where).c_str());
}

}  // namespace ddl::cuda::detail
