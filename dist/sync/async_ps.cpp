// async-ps:S: rank 0 runs a parameter server beside its own training: one thread per
// worker receives that worker's gradients, steps a copy of the weights with an SGD of the
// user's options (1/N of each gradient per push), and answers with the current weights as
// soon as the staleness bound lets that worker go on. No barrier: a fast worker runs up to
// S clocks ahead of the slowest. See Note [Stale-synchronous parallel].
#include <algorithm>
#include <condition_variable>
#include <iostream>
#include <limits>
#include <mutex>
#include <thread>

#include <ddl/dist/gloo/process_group_gloo.h>
#include <ddl/dist/init.h>
#include <ddl/dist/sync/async_ps.h>
#include <ddl/dist/sync/builtins.h>
#include <ddl/optim/sgd.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/join.h>

namespace ddl::dist::detail {

// Note [Stale-synchronous parallel]
// Each worker's clock counts the gradients it has pushed. Worker w may start clock c (pull
// the weights it computes clock c's gradient on) only once every worker has pushed at
// least c - S gradients: the slowest worker is at most S clocks behind (Ho et al.'s
// bounded staleness). S = 0 is bulk-synchronous: every clock's N gradients are applied
// before anyone pulls, each gradient was computed on the same weights, and with plain SGD
// the N pushes of g_w/N sum to one step of the mean: the synchronous param-server's update
// (up to the order of the additions): a push of clock c waits until every worker has pulled
// clock c - S's weights, so no read sees an update of its own clock. With momentum the server's SGD sees N small steps
// per clock instead of one, so S = 0 then differs from param-server. Each worker talks to the server over a two-rank
// Gloo group of its own: send/recv on one group complete in posting order, so a straggler's pending push would hold up
// every other worker's. Buffers (BatchNorm statistics) stay each worker's own after the first broadcast.

namespace {

constexpr int64_t kDone = std::numeric_limits<int64_t>::max() / 2;  // the clock of a finished worker

Tensor pack(const std::vector<Tensor>& ts) {
  std::vector<Tensor> flat;
  for (const auto& t : ts) flat.push_back(t.contiguous().view({-1}));
  return cat(flat);
}
void unpack(const Tensor& flat, const std::vector<Tensor>& ts) {
  int64_t at = 0;
  for (const auto& t : ts) {
    t.copy_(flat.narrow(0, at, t.numel()).view(t.shape()));
    at += t.numel();
  }
}

int instances = 0;  // every rank builds its strategies in the same order: keys agree

}  // namespace

class AsyncPsSync final : public SyncStrategy {
 public:
  AsyncPsSync(ModelPtr model, GroupPtr group, int bound) : model_(std::move(model)), group_(std::move(group)) {
    stats_.staleness_bound = bound;
    broadcast_state(*model_, *group_);
    params_ = trainable_parameters(*model_);
    const int world = group_->size(), rank = group_->rank();
    if (world == 1) return;
    const std::string key = "async-ps/" + std::to_string(instances++) + "/pair";
    GlooOptions opts;
    opts.shm = 0;
    auto store = default_store();
    if (rank == 0) {
      for (int w = 1; w < world; ++w)
        pairs_.push_back(std::make_shared<ProcessGroupGloo>(
            std::make_shared<PrefixStore>(key + std::to_string(w), store), 0, 2, opts));
      for (const auto& p : params_) server_params_.emplace_back(p.data().clone(), true);
      clocks_.assign(static_cast<size_t>(world), 0);
      pulled_.assign(static_cast<size_t>(world), 0);
      for (int w = 1; w < world; ++w) servers_.emplace_back([this, w] { serve(w); });
    } else {
      pairs_.push_back(std::make_shared<ProcessGroupGloo>(
          std::make_shared<PrefixStore>(key + std::to_string(rank), store), 1, 2, opts));
    }
  }

  ~AsyncPsSync() override {
    const int world = group_->size();
    if (world == 1) return;
    try {
      if (group_->rank() != 0) {
        pairs_[0]->send(from_vector(std::vector<int64_t>{-1, 0}), 0, 0);  // done
      } else {
        {
          std::lock_guard<std::mutex> lock(mu_);
          clocks_[0] = pulled_[0] = kDone;  // nobody waits for the server's own worker any more
        }
        cv_.notify_all();
        for (auto& t : servers_) t.join();
        std::cerr << group_->log_prefix() << " " << name() << ": " << stats_.updates << " updates, staleness max "
                  << stats_.max_staleness << ", mean " << stats_.mean_staleness << " (in updates); clock gap max "
                  << stats_.max_clock_gap << " (bound " << stats_.staleness_bound << ")" << std::endl;
      }
    } catch (const std::exception& e) {
      std::cerr << group_->log_prefix() << " " << name() << ": shutting down: " << e.what() << std::endl;
      for (auto& t : servers_)
        if (t.joinable()) t.detach();
    }
  }

  std::string name() const override { return "async-ps:" + std::to_string(stats_.staleness_bound); }
  nn::Module& model() override { return *model_; }
  const AsyncPsStats& stats() const { return stats_; }
  // Pushes and pulls travel on the pairs, not on the job group.
  CommStats side_stats() const override {
    CommStats sum;
    for (const auto& pair : pairs_) {
      const CommStats s = pair->stats();
      for (size_t k = 0; k < sum.ops.size(); ++k) {
        sum.ops[k].calls += s.ops[k].calls;
        sum.ops[k].bytes_sent += s.ops[k].bytes_sent;
        sum.ops[k].bytes_received += s.ops[k].bytes_received;
      }
    }
    return sum;
  }

  // Push: a worker sends its clock, the version it read and its gradient; the server's
  // own worker keeps its gradient for step(), where the optimizer is known.
  void after_backward() override {
    comm_.after_backward_ms = 0;
    if (group_->size() == 1 || group_->rank() == 0) return;
    const Tensor grads = pack(gradients_of(params_));
    comm_.after_backward_ms = timed_ms([&] {
      pairs_[0]->send(from_vector(std::vector<int64_t>{clock_, read_version_}), 0, 0);
      pairs_[0]->send(grads, 0, 1);
    });
  }

  // Pull: the weights of the next clock, once the bound allows.
  void step(optim::Optimizer& opt) override {
    if (group_->size() == 1) return opt.step();
    ++clock_;
    if (group_->rank() != 0) {
      const Tensor header = zeros({2}, DType::Int64), weights = zeros({numel()});
      comm_.step_ms = timed_ms([&] {
        pairs_[0]->recv(header, 0, 2);
        pairs_[0]->recv(weights, 0, 3);
      });
      read_version_ = header[0].item<int64_t>();
      note_gap(header[1].item<int64_t>());
      std::vector<Tensor> ps;
      for (auto& p : params_) ps.push_back(p.data());
      unpack(weights, ps);
      return;
    }
    ensure_server_optimizer(opt);
    apply(0, clock_ - 1, read_version_, pack(gradients_of(params_)));
    comm_.step_ms = timed_ms([&] {
      std::unique_lock<std::mutex> lock(mu_);
      const int64_t gap = wait_for_bound(lock, 0);
      for (size_t i = 0; i < params_.size(); ++i) params_[i].data().copy_(server_params_[i].data());
      read_version_ = version_;
      pulled_[0] = clocks_[0];
      cv_.notify_all();
      note_gap(gap);
    });
  }

 private:
  int64_t numel() const {
    int64_t n = 0;
    for (const auto& p : params_) n += p.numel();
    return n;
  }
  void note_gap(int64_t gap) {
    stats_.clock_gaps.push_back(gap);
    stats_.max_clock_gap = std::max(stats_.max_clock_gap, gap);
  }

  // The server's SGD: the user's options, read again every step (schedules change lr).
  void ensure_server_optimizer(optim::Optimizer& opt) {
    auto* sgd = dynamic_cast<optim::SGD*>(&opt);
    DDL_CHECK(sgd != nullptr && opt.param_groups().size() == 1, name(),
              ": the server steps an SGD with one parameter group; got another optimizer");
    const auto& o = opt.param_groups()[0].options;
    std::lock_guard<std::mutex> lock(mu_);
    if (!server_opt_) {
      server_opt_ = std::make_unique<optim::SGD>(server_params_, optim::SGDOptions(o.at("lr"))
                                                                     .momentum(o.at("momentum"))
                                                                     .dampening(o.at("dampening"))
                                                                     .weight_decay(o.at("weight_decay"))
                                                                     .nesterov(o.at("nesterov") != 0));
      cv_.notify_all();
    }
    server_opt_->param_groups()[0].set_lr(o.at("lr"));
  }

  // One push applied: 1/N of the gradient, one SGD step, one version more.
  void apply(int worker, int64_t clock, int64_t read, const Tensor& grads) {
    std::unique_lock<std::mutex> lock(mu_);
    // Held until every worker has pulled the weights of clock - S: no read of those weights
    // sees this later update (at S = 0, every clock's reads see exactly the earlier clocks).
    cv_.wait(lock, [&] {
      return server_opt_ != nullptr &&
             *std::min_element(pulled_.begin(), pulled_.end()) >= clock - stats_.staleness_bound;
    });
    const Tensor g = grads / static_cast<double>(group_->size());
    int64_t at = 0;
    for (auto& p : server_params_) {
      p.set_grad(g.narrow(0, at, p.numel()).view(p.shape()).clone());
      at += p.numel();
    }
    server_opt_->step();
    const int64_t staleness = version_ - read;
    ++version_;
    ++stats_.updates;
    stats_.max_staleness = std::max(stats_.max_staleness, staleness);
    stats_.mean_staleness += (static_cast<double>(staleness) - stats_.mean_staleness) / stats_.updates;
    if (stats_.histogram.size() <= static_cast<size_t>(staleness)) stats_.histogram.resize(staleness + 1, 0);
    ++stats_.histogram[staleness];
    clocks_[worker] = clock + 1;
    cv_.notify_all();
  }

  // Blocks until every worker has pushed at least clocks_[w] - bound gradients; returns
  // the gap then (this worker's clock minus the slowest's). See Note [Stale-synchronous parallel].
  int64_t wait_for_bound(std::unique_lock<std::mutex>& lock, int w) {
    int64_t slowest = 0;
    cv_.wait(lock, [&] {
      slowest = *std::min_element(clocks_.begin(), clocks_.end());
      return slowest >= clocks_[w] - stats_.staleness_bound;
    });
    return slowest >= kDone ? 0 : clocks_[w] - slowest;
  }

  // Rank 0's thread for worker w: push in, wait for the bound, weights out; until w is done.
  void serve(int w) {
    ProcessGroupGloo& pair = *pairs_[static_cast<size_t>(w - 1)];
    const Tensor header = zeros({2}, DType::Int64), grads = zeros({numel()});
    try {
      for (;;) {
        pair.recv(header, 1, 0);
        const int64_t clock = header[0].item<int64_t>();
        if (clock < 0) break;
        pair.recv(grads, 1, 1);
        apply(w, clock, header[1].item<int64_t>(), grads);
        Tensor weights;
        int64_t version = 0, gap = 0;
        {
          std::unique_lock<std::mutex> lock(mu_);
          gap = wait_for_bound(lock, w);
          std::vector<Tensor> ps;
          for (auto& p : server_params_) ps.push_back(p.data());
          weights = pack(ps);
          version = version_;
          pulled_[static_cast<size_t>(w)] = clocks_[static_cast<size_t>(w)];
          cv_.notify_all();
        }
        pair.send(from_vector(std::vector<int64_t>{version, gap}), 1, 2);
        pair.send(weights, 1, 3);
      }
    } catch (const std::exception& e) {
      std::cerr << group_->log_prefix() << " " << name() << ": serving rank " << w << ": " << e.what() << std::endl;
    }
    std::lock_guard<std::mutex> lock(mu_);
    clocks_[static_cast<size_t>(w)] = pulled_[static_cast<size_t>(w)] = kDone;
    cv_.notify_all();
  }

  ModelPtr model_;
  GroupPtr group_;
  std::vector<Variable> params_;
  std::vector<std::shared_ptr<ProcessGroupGloo>> pairs_;  // rank 0: one per worker; others: theirs
  int64_t clock_ = 0;                                     // gradients this rank has pushed
  int64_t read_version_ = 0;                              // the server version of this rank's weights
  AsyncPsStats stats_;
  // Rank 0's server state, under mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Variable> server_params_;
  std::unique_ptr<optim::SGD> server_opt_;
  std::vector<int64_t> clocks_;  // per worker: gradients pushed and applied
  std::vector<int64_t> pulled_;  // per worker: the clock whose weights it last pulled
  int64_t version_ = 0;
  std::vector<std::thread> servers_;
};

std::unique_ptr<SyncStrategy> make_async_ps_sync(ModelPtr model, GroupPtr group, int staleness) {
  return std::make_unique<AsyncPsSync>(std::move(model), std::move(group), staleness);
}

}  // namespace ddl::dist::detail

namespace ddl::dist {
const AsyncPsStats* async_ps_stats(const SyncStrategy& s) {
  const auto* a = dynamic_cast<const detail::AsyncPsSync*>(&s);
  return a ? &a->stats() : nullptr;
}
}  // namespace ddl::dist
