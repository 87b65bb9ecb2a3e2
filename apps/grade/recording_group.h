// The process group a graded strategy gets: every call goes to the real group unchanged,
// and each all_reduce is recorded with how many gradients backward had produced when it
// was called (the grader's own hooks count them). From that the ddp lab's checks see the
// buckets a strategy all-reduces and whether any started while backward still ran. It
// changes no result and moves no extra byte.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <ddl/dist/process_group.h>

namespace ddl::grade {

class RecordingGroup final : public dist::ProcessGroup {
 public:
  struct AllReduceCall {
    int64_t numel = 0;
    int64_t gradients_before = 0;  // gradients that had arrived in this step's backward
  };
  struct Step {
    std::vector<int64_t> arrivals;  // parameter indices, in the order their gradients arrived
    std::vector<AllReduceCall> all_reduces;
  };

  explicit RecordingGroup(std::shared_ptr<dist::ProcessGroup> inner);
  dist::ProcessGroup& inner() { return *inner_; }

  // The grader's side: a step begins (before its forward), parameter i's gradient arrived
  // (from a hook registered before the strategy's, so it runs first).
  void begin_step();
  void gradient_arrived(int64_t param);
  std::vector<Step> steps() const;

  std::string backend() const override { return inner_->backend(); }
  std::shared_ptr<dist::Work> all_reduce_async(const Tensor& t, dist::ReduceOp op) override;
  std::shared_ptr<dist::Work> broadcast_async(const Tensor& t, int root) override {
    return inner_->broadcast_async(t, root);
  }
  std::shared_ptr<dist::Work> reduce_async(const Tensor& t, int root, dist::ReduceOp op) override {
    return inner_->reduce_async(t, root, op);
  }
  std::shared_ptr<dist::Work> all_gather_async(const Tensor& output, const Tensor& input) override {
    return inner_->all_gather_async(output, input);
  }
  std::shared_ptr<dist::Work> reduce_scatter_async(const Tensor& output, const Tensor& input,
                                                   dist::ReduceOp op) override {
    return inner_->reduce_scatter_async(output, input, op);
  }
  std::shared_ptr<dist::Work> gather_async(const Tensor& output, const Tensor& input, int root) override {
    return inner_->gather_async(output, input, root);
  }
  std::shared_ptr<dist::Work> scatter_async(const Tensor& output, const Tensor& input, int root) override {
    return inner_->scatter_async(output, input, root);
  }
  std::shared_ptr<dist::Work> all_to_all_async(const Tensor& output, const Tensor& input) override {
    return inner_->all_to_all_async(output, input);
  }
  std::shared_ptr<dist::Work> barrier_async() override { return inner_->barrier_async(); }
  std::shared_ptr<dist::Work> send_async(const Tensor& t, int dst, int tag) override {
    return inner_->send_async(t, dst, tag);
  }
  std::shared_ptr<dist::Work> recv_async(const Tensor& t, int src, int tag) override {
    return inner_->recv_async(t, src, tag);
  }
  dist::CommStats stats() const override { return inner_->stats(); }
  void reset_stats() override { inner_->reset_stats(); }
  bool is_broken() const override { return inner_->is_broken(); }
  std::string broken_reason() const override { return inner_->broken_reason(); }

 private:
  std::shared_ptr<dist::ProcessGroup> inner_;
  mutable std::mutex mu_;  // hooks and calls may come from the backward engine's thread
  std::vector<Step> steps_;
};

}  // namespace ddl::grade
