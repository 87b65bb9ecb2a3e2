// Shared by the nccl tests (test_nccl, test_nccl_ranks): an adapter that runs the CPU-tensor
// collective checks of tests/common/collective_checks.h on a GPU, checks that use CUDA tensors
// directly, and DDP on CUDA against one process. No test cases here (they live in the
// executables), so this can be a static library.
#pragma once

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <ddl/ddl.h>
#include <ddl/dist/dist.h>

namespace ddl::test {

// Init options for the tests' groups: a 60 s timeout, so a broken run fails instead of hanging.
dist::InitOptions nccl_test_options();

// Runs each call on `inner` with a device copy of its CPU tensors and copies the results
// back when the NCCL work completes (so the async send/recv ring of the checks still works).
class OnDevice final : public dist::ProcessGroup {
 public:
  OnDevice(std::shared_ptr<dist::ProcessGroup> inner, Device d)
      : ProcessGroup(inner->rank(), inner->size()), in_(inner), d_(d) {}
  std::string backend() const override { return in_->backend(); }
  std::shared_ptr<dist::Work> all_reduce_async(const Tensor& t, dist::ReduceOp op) override {
    return run({t}, [&](auto& d) { return in_->all_reduce_async(d[0], op); });
  }
  std::shared_ptr<dist::Work> broadcast_async(const Tensor& t, int root) override {
    return run({t}, [&](auto& d) { return in_->broadcast_async(d[0], root); });
  }
  std::shared_ptr<dist::Work> reduce_async(const Tensor& t, int root, dist::ReduceOp op) override {
    return run({t}, [&](auto& d) { return in_->reduce_async(d[0], root, op); });
  }
  std::shared_ptr<dist::Work> all_gather_async(const Tensor& o, const Tensor& i) override {
    return run({o, i}, [&](auto& d) { return in_->all_gather_async(d[0], d[1]); });
  }
  std::shared_ptr<dist::Work> reduce_scatter_async(const Tensor& o, const Tensor& i, dist::ReduceOp op) override {
    return run({o, i}, [&](auto& d) { return in_->reduce_scatter_async(d[0], d[1], op); });
  }
  std::shared_ptr<dist::Work> gather_async(const Tensor& o, const Tensor& i, int root) override {
    return run({o, i}, [&](auto& d) { return in_->gather_async(d[0], d[1], root); });
  }
  std::shared_ptr<dist::Work> scatter_async(const Tensor& o, const Tensor& i, int root) override {
    return run({o, i}, [&](auto& d) { return in_->scatter_async(d[0], d[1], root); });
  }
  std::shared_ptr<dist::Work> all_to_all_async(const Tensor& o, const Tensor& i) override {
    return run({o, i}, [&](auto& d) { return in_->all_to_all_async(d[0], d[1]); });
  }
  std::shared_ptr<dist::Work> barrier_async() override { return in_->barrier_async(); }
  std::shared_ptr<dist::Work> send_async(const Tensor& t, int dst, int tag) override {
    return run({t}, [&](auto& d) { return in_->send_async(d[0], dst, tag); });
  }
  std::shared_ptr<dist::Work> recv_async(const Tensor& t, int src, int tag) override {
    return run({t}, [&](auto& d) { return in_->recv_async(d[0], src, tag); });
  }
  dist::CommStats stats() const override { return in_->stats(); }
  void reset_stats() override { in_->reset_stats(); }
  bool is_broken() const override { return in_->is_broken(); }
  std::string broken_reason() const override { return in_->broken_reason(); }

 private:
  template <typename F>
  std::shared_ptr<dist::Work> run(std::vector<Tensor> host, F call) {
    std::vector<Tensor> dev;
    for (const Tensor& h : host) dev.push_back(h.defined() ? h.to(d_) : Tensor());
    auto inner = call(dev);
    auto outer = std::make_shared<dist::Work>(inner->description());
    // Runs on the watchdog thread: a failed copy back fails the Work rather than the process.
    inner->on_completion([host, dev, outer](dist::Work& w) {
      std::exception_ptr failure = w.exception();
      if (w.is_success()) try {
          for (size_t k = 0; k < host.size(); ++k)
            if (host[k].defined()) host[k].copy_(dev[k]);
        } catch (...) {
          failure = std::current_exception();
        }
      outer->finish(failure);
    });
    return outer;
  }
  std::shared_ptr<dist::ProcessGroup> in_;
  Device d_;
};

// Stream ordering, a strided view, byte counters and the refusal of CPU tensors on `pg`.
void check_native(dist::ProcessGroup& pg, Device dev);

// World 2: rank 0 sends behind long GPU work on a side stream, rank 1 receives, and both
// call barrier(), which does not wait for the send/recv lanes (Note [NCCL barrier]); rank 1
// then orders its stream after the receive with a stream-only wait() and reads the message.
void check_barrier_after_p2p(dist::ProcessGroup& pg, Device dev);

// World 2: rank 0 posts a receive and calls barrier(); rank 1 calls barrier() and only then
// sends. The barrier must not wait for the receive (that would deadlock until the timeout);
// rank 0 then waits on the receive's Work and reads the message.
void check_recv_across_barrier(dist::ProcessGroup& pg, Device dev);

// World 2: both ranks post a receive from the other, call barrier(), then send to the other
// (the ring `recv left; barrier; send right`). Each barrier must complete without this
// rank's receive, whose send the peer posts after its own barrier. Then the same exchange
// without a barrier into a non-contiguous receive target.
void check_recv_barrier_send_both(dist::ProcessGroup& pg, Device dev);

// Trains a small CNN on `dev` alone and under DDP over `pg` (each rank a slice of every
// batch); fails (DIST_EXPECT) unless the parameters agree to 1e-4.
void ddp_matches_one_process(std::shared_ptr<dist::ProcessGroup> pg, Device dev);

}  // namespace ddl::test
