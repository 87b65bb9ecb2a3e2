// ProcessGroupAuto: what init_process_group("auto") (the default) returns on a machine
// with GPUs and the nccl backend: each call goes to the backend of its tensors' device,
// gloo for CPU tensors and nccl for CUDA tensors (PyTorch's "cpu:gloo,cuda:nccl"), so
// gradients travel over NCCL while host-side metrics still reduce over gloo.
// It adds no ordering of its own: each backend keeps its own call order.
#pragma once

#include <atomic>
#include <memory>

#include <ddl/dist/process_group.h>

namespace ddl::dist {

class ProcessGroupAuto final : public ProcessGroup {
 public:
  // Both groups span the same ranks (same rank and size).
  ProcessGroupAuto(std::shared_ptr<ProcessGroup> cpu, std::shared_ptr<ProcessGroup> cuda);
  std::string backend() const override { return cpu_->backend() + "+" + cuda_->backend(); }

  std::shared_ptr<Work> all_reduce_async(const Tensor& t, ReduceOp op = ReduceOp::Sum) override;
  std::shared_ptr<Work> broadcast_async(const Tensor& t, int root) override;
  std::shared_ptr<Work> reduce_async(const Tensor& t, int root, ReduceOp op = ReduceOp::Sum) override;
  std::shared_ptr<Work> all_gather_async(const Tensor& output, const Tensor& input) override;
  std::shared_ptr<Work> reduce_scatter_async(const Tensor& output, const Tensor& input,
                                             ReduceOp op = ReduceOp::Sum) override;
  std::shared_ptr<Work> gather_async(const Tensor& output, const Tensor& input, int root) override;
  std::shared_ptr<Work> scatter_async(const Tensor& output, const Tensor& input, int root) override;
  std::shared_ptr<Work> all_to_all_async(const Tensor& output, const Tensor& input) override;
  // A host barrier: completes once every rank has reached it and their earlier collectives
  // on this group are done, the NCCL ones included once a CUDA tensor went through the group
  // (sends and receives are not covered: wait on their Work). Before that it is the CPU
  // group's barrier alone, so a CPU-only job never creates NCCL communicators (which
  // would fail outright with more ranks than GPUs: NCCL allows one rank per GPU).
  std::shared_ptr<Work> barrier_async() override;
  std::shared_ptr<Work> send_async(const Tensor& t, int dst, int tag = 0) override;
  std::shared_ptr<Work> recv_async(const Tensor& t, int src, int tag = 0) override;

  // Both backends' counters, added per operation kind.
  CommStats stats() const override;
  void reset_stats() override;
  bool is_broken() const override;
  std::string broken_reason() const override;

  ProcessGroup& cpu_group() const { return *cpu_; }
  ProcessGroup& cuda_group() const { return *cuda_; }

 private:
  ProcessGroup& pick(const Tensor& t) const {
    if (!t.defined() || !t.device().is_cuda()) return *cpu_;
    cuda_used_.store(true, std::memory_order_relaxed);  // every rank makes the same calls: they agree
    return *cuda_;
  }

  std::shared_ptr<ProcessGroup> cpu_, cuda_;
  mutable std::atomic<bool> cuda_used_{false};
};

}  // namespace ddl::dist
