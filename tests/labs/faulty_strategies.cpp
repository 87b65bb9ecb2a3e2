// Strategies with the mistakes students make, one per check of ddl-grade, so that
// tests/labs/test_labs.sh sees each check fail with its reason: a deadlock, a sum not
// divided by N, a collective where the lab asks for send/recv, and ranks that add the
// gradients in different orders (replicas that differ in the last bits), a rank that
// dies; for lab ddp-buckets, the right buckets all-reduced only after backward; and lab os's
// shared-memory averaging with each rank adding from its own slot.
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <ddl/dist/sync/common.h>
#include <ddl/tensor/core/factory.h>

namespace {

using namespace ddl;
using namespace ddl::dist;

enum class Fault { Hang, NoAverage, Collective, OwnOrder, Crash };

// Every rank's gradient to every rank, summed starting from the rank's own (OwnOrder) or
// in rank order (NoAverage, which then forgets to divide).
void exchange_sum(ProcessGroup& g, const Tensor& flat, bool own_first) {
  const int rank = g.rank(), world = g.size();
  std::vector<Tensor> from(world);
  std::vector<std::shared_ptr<Work>> posted;
  for (int p = 0; p < world; ++p)
    if (p != rank) {
      from[p] = empty_like(flat);
      posted.push_back(g.recv_async(from[p], p, 99));
    }
  for (int p = 0; p < world; ++p)
    if (p != rank) posted.push_back(g.send_async(flat, p, 99));
  for (auto& w : posted) w->wait();
  from[rank] = flat.clone();
  flat.zero_();
  for (int i = 0; i < world; ++i) flat.add_(from[own_first ? (rank + i) % world : i]);
}

class FaultySync final : public SyncStrategy {
 public:
  FaultySync(Fault fault, std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group)
      : fault_(fault), model_(std::move(model)), group_(std::move(group)) {
    broadcast_state(*model_, *group_);
    params_ = trainable_parameters(*model_);
  }
  std::string name() const override { return "faulty"; }
  nn::Module& model() override { return *model_; }
  void after_backward() override {
    coalesced(gradients_of(params_), [&](const Tensor& flat) {
      ProcessGroup& g = *group_;
      switch (fault_) {
        case Fault::Hang:  // every rank waits for its right neighbour, which never sends
          g.recv(flat, (g.rank() + 1) % g.size(), 98);
          break;
        case Fault::NoAverage:
          exchange_sum(g, flat, false);
          break;
        case Fault::Collective:
          g.all_reduce(flat);
          flat.div_(g.size());
          break;
        case Fault::Crash:  // a segmentation fault, say, on rank 1
          if (g.rank() == 1) std::abort();
          g.all_reduce(flat);
          break;
        case Fault::OwnOrder:
          exchange_sum(g, flat, true);
          flat.div_(g.size());
          break;
      }
    });
  }

 private:
  Fault fault_;
  std::shared_ptr<nn::Module> model_;
  std::shared_ptr<ProcessGroup> group_;
  std::vector<Variable> params_;
};

// Lab os's strategy with one mistake: every rank adds the slots starting from its own, so
// with three ranks the replicas differ in the last bits while no byte goes through the
// ProcessGroup (the bytes check passes, the identical-replicas check fails).
class ShmOwnOrderSync final : public SyncStrategy {
 public:
  ShmOwnOrderSync(std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group)
      : model_(std::move(model)), group_(std::move(group)) {
    broadcast_state(*model_, *group_);
    params_ = trainable_parameters(*model_);
    for (const auto& p : params_) floats_ += p.data().numel();
    const Tensor id = from_vector<int64_t>({getpid(), static_cast<int64_t>(std::random_device{}() >> 1)});
    group_->broadcast(id, 0);
    name_ = "/ddl-oslab-faulty-" + std::to_string(id.data<int64_t>()[0]) + "-" + std::to_string(id.data<int64_t>()[1]);
    bytes_ = 64 + static_cast<size_t>(group_->size() * floats_) * sizeof(float);
    const bool create = group_->rank() == 0;
    if (!create) group_->barrier();
    const int fd = shm_open(name_.c_str(), create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
    if (fd < 0 || (create && ftruncate(fd, static_cast<off_t>(bytes_)) != 0))
      throw std::runtime_error("faulty-shm-own-order: " + name_ + ": " + std::strerror(errno));
    base_ = static_cast<char*>(mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
    if (base_ == MAP_FAILED) throw std::runtime_error("faulty-shm-own-order: mmap failed");
    if (create) {
      pthread_barrierattr_t attr;
      pthread_barrierattr_init(&attr);
      pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
      pthread_barrier_init(barrier(), &attr, static_cast<unsigned>(group_->size()));
      group_->barrier();
    }
    group_->barrier();
  }
  ~ShmOwnOrderSync() override {
    munmap(base_, bytes_);
    if (group_->rank() == 0) shm_unlink(name_.c_str());
  }
  std::string name() const override { return "faulty-shm-own-order"; }
  nn::Module& model() override { return *model_; }
  void after_backward() override {
    coalesced(gradients_of(params_), [&](const Tensor& flat) {
      const int rank = group_->rank(), world = group_->size();
      float* out = flat.data<float>();
      const int64_t n = flat.numel();
      std::memcpy(slot(rank), out, static_cast<size_t>(n) * sizeof(float));
      pthread_barrier_wait(barrier());
      for (int64_t i = 0; i < n; ++i) out[i] = 0;
      for (int k = 0; k < world; ++k)
        for (int64_t i = 0; i < n; ++i) out[i] += slot((rank + k) % world)[i];  // the mistake: own slot first
      pthread_barrier_wait(barrier());
      flat.div_(world);
    });
  }

 private:
  pthread_barrier_t* barrier() const { return reinterpret_cast<pthread_barrier_t*>(base_); }
  float* slot(int r) const { return reinterpret_cast<float*>(base_ + 64) + r * floats_; }
  std::shared_ptr<nn::Module> model_;
  std::shared_ptr<ProcessGroup> group_;
  std::vector<Variable> params_;
  int64_t floats_ = 0;
  std::string name_;
  size_t bytes_ = 0;
  char* base_ = nullptr;
};

void add(const char* name, Fault fault) {
  register_sync_strategy(
      name,
      [fault](std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group) {
        return std::make_unique<FaultySync>(fault, std::move(model), std::move(group));
      },
      "a deliberately wrong strategy (tests/labs)");
}

// Lab ddp-buckets' rule for the buckets, right, but every bucket is all-reduced in
// after_backward(), when backward is over: equal weights and bytes, no overlap.
class LateBucketsSync final : public SyncStrategy {
 public:
  LateBucketsSync(std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group, int64_t cap)
      : model_(std::move(model)), group_(std::move(group)) {
    broadcast_state(*model_, *group_);
    params_ = trainable_parameters(*model_);
    int64_t filled = 0;
    for (size_t i = params_.size(); i-- > 0;) {
      const int64_t bytes = params_[i].numel() * 4;
      if (buckets_.empty() || filled + bytes > cap) buckets_.emplace_back(), filled = 0;
      buckets_.back().push_back(i);
      filled += bytes;
    }
  }
  std::string name() const override { return "faulty-ddp-late"; }
  nn::Module& model() override { return *model_; }
  void after_backward() override {
    const std::vector<Tensor> grads = gradients_of(params_);
    std::vector<Tensor> flats;
    std::vector<std::shared_ptr<Work>> works;
    for (const auto& bucket : buckets_) {
      int64_t numel = 0;
      for (const size_t i : bucket) numel += grads[i].numel();
      flats.push_back(zeros({numel}));
      int64_t at = 0;
      for (const size_t i : bucket) {
        flats.back().narrow(0, at, grads[i].numel()).view(grads[i].shape()).copy_(grads[i]);
        at += grads[i].numel();
      }
      works.push_back(group_->all_reduce_async(flats.back()));
    }
    for (size_t k = 0; k < buckets_.size(); ++k) {
      works[k]->wait();
      flats[k].div_(group_->size());
      int64_t at = 0;
      for (const size_t i : buckets_[k]) {
        grads[i].copy_(flats[k].narrow(0, at, grads[i].numel()).view(grads[i].shape()));
        at += grads[i].numel();
      }
    }
  }

 private:
  std::shared_ptr<nn::Module> model_;
  std::shared_ptr<ProcessGroup> group_;
  std::vector<Variable> params_;
  std::vector<std::vector<size_t>> buckets_;
};

}  // namespace

extern "C" void ddl_register_strategies() {
  register_sync_strategy(
      "faulty-ddp-late",
      [](std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group, const std::string& cap) {
        return std::make_unique<LateBucketsSync>(std::move(model), std::move(group), std::stoll(cap));
      },
      SyncStrategyInfo{.help = "a deliberately wrong strategy (tests/labs)", .arg = "CAP"});
  add("faulty-hang", Fault::Hang);
  add("faulty-no-average", Fault::NoAverage);
  add("faulty-collective", Fault::Collective);
  add("faulty-own-order", Fault::OwnOrder);
  add("faulty-crash", Fault::Crash);
  register_sync_strategy(
      "faulty-shm-own-order",
      [](std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group) {
        return std::make_unique<ShmOwnOrderSync>(std::move(model), std::move(group));
      },
      "a deliberately wrong strategy (tests/labs)");
}
