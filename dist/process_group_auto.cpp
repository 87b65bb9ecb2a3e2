// ProcessGroupAuto: per-call dispatch on the tensors' device (see process_group_auto.h).
#include <exception>
#include <mutex>
#include <utility>

#include <ddl/base/error.h>
#include <ddl/dist/process_group_auto.h>

namespace ddl::dist {

ProcessGroupAuto::ProcessGroupAuto(std::shared_ptr<ProcessGroup> cpu, std::shared_ptr<ProcessGroup> cuda)
    : ProcessGroup(cpu ? cpu->rank() : 0, cpu ? cpu->size() : 1), cpu_(std::move(cpu)), cuda_(std::move(cuda)) {
  DDL_CHECK(cpu_ && cuda_, "ProcessGroupAuto: both a CPU and a CUDA group are required");
  DDL_ASSERT(cuda_->rank() == rank() && cuda_->size() == size(), "ProcessGroupAuto: the groups span different ranks");
}

std::shared_ptr<Work> ProcessGroupAuto::all_reduce_async(const Tensor& t, ReduceOp op) {
  return pick(t).all_reduce_async(t, op);
}
std::shared_ptr<Work> ProcessGroupAuto::broadcast_async(const Tensor& t, int root) {
  return pick(t).broadcast_async(t, root);
}
std::shared_ptr<Work> ProcessGroupAuto::reduce_async(const Tensor& t, int root, ReduceOp op) {
  return pick(t).reduce_async(t, root, op);
}
std::shared_ptr<Work> ProcessGroupAuto::all_gather_async(const Tensor& output, const Tensor& input) {
  return pick(input).all_gather_async(output, input);
}
std::shared_ptr<Work> ProcessGroupAuto::reduce_scatter_async(const Tensor& output, const Tensor& input, ReduceOp op) {
  return pick(input).reduce_scatter_async(output, input, op);
}
// Non-roots may pass an undefined output (gather) or input (scatter): pick by the other.
std::shared_ptr<Work> ProcessGroupAuto::gather_async(const Tensor& output, const Tensor& input, int root) {
  return pick(input).gather_async(output, input, root);
}
std::shared_ptr<Work> ProcessGroupAuto::scatter_async(const Tensor& output, const Tensor& input, int root) {
  return pick(output).scatter_async(output, input, root);
}
std::shared_ptr<Work> ProcessGroupAuto::all_to_all_async(const Tensor& output, const Tensor& input) {
  return pick(input).all_to_all_async(output, input);
}
// Once CUDA tensors went through the group: both backends' barriers, CUDA first (it is
// asynchronous to launch), combined: the Work completes once every rank's earlier GPU
// and CPU work on this group is done (the first error wins). The nccl barrier waits for
// the GPU to finish, not just the stream. Before any CUDA call: the CPU barrier alone.
std::shared_ptr<Work> ProcessGroupAuto::barrier_async() {
  if (!cuda_used_.load(std::memory_order_relaxed)) return cpu_->barrier_async();
  auto gpu = cuda_->barrier_async();
  auto host = cpu_->barrier_async();
  auto both = std::make_shared<Work>("barrier()");
  auto state = std::make_shared<std::pair<std::mutex, int>>();  // finished parts
  auto error = std::make_shared<std::exception_ptr>();
  auto part_done = [both, state, error](Work& w) {
    bool last = false;
    std::exception_ptr e;
    {
      std::lock_guard<std::mutex> lock(state->first);
      if (w.exception() && !*error) *error = w.exception();
      last = ++state->second == 2;
      e = *error;
    }
    if (last) both->finish(e);
  };
  gpu->on_completion(part_done);
  host->on_completion(part_done);
  return both;
}
std::shared_ptr<Work> ProcessGroupAuto::send_async(const Tensor& t, int dst, int tag) {
  return pick(t).send_async(t, dst, tag);
}
std::shared_ptr<Work> ProcessGroupAuto::recv_async(const Tensor& t, int src, int tag) {
  return pick(t).recv_async(t, src, tag);
}

CommStats ProcessGroupAuto::stats() const {
  CommStats a = cpu_->stats();
  const CommStats b = cuda_->stats();
  for (int k = 0; k < kNumOpKinds; ++k) {
    a.ops[k].calls += b.ops[k].calls;
    a.ops[k].bytes_sent += b.ops[k].bytes_sent;
    a.ops[k].bytes_received += b.ops[k].bytes_received;
  }
  return a;
}

void ProcessGroupAuto::reset_stats() {
  cpu_->reset_stats();
  cuda_->reset_stats();
}

bool ProcessGroupAuto::is_broken() const { return cpu_->is_broken() || cuda_->is_broken(); }

std::string ProcessGroupAuto::broken_reason() const {
  return cpu_->is_broken() ? cpu_->broken_reason() : cuda_->broken_reason();
}

}  // namespace ddl::dist
