// Join: training with uneven inputs, as PyTorch's torch.distributed.algorithms.Join. A rank
// that runs out of batches calls join() (or leaves the Join's scope); until every rank has,
// it shadows the collectives of the ranks that still train (DDP: a zero gradient per bucket),
// so none of them hangs and no batch is dropped. Then every joinable's post hook runs (DDP:
// all ranks take the weights of the last rank to join). With throw_on_early_termination
// every rank throws instead, as soon as one has run out. Not shadowed: collectives of the
// training loop outside the joinables.
#pragma once

#include <memory>
#include <vector>

#include <ddl/dist/process_group.h>

namespace ddl::dist {

// Options every joinable sees (PyTorch passes them to join_hook as keyword arguments).
struct JoinOptions {
  bool enable = true;  // false: join() does nothing (inputs known to be even)
  // DDP: divide gradients by the initial world size (every sample weighs the same; the joined
  // ranks' zeros count in the average), or by the ranks still training (see Note [Join divisor]).
  bool divide_by_initial_world_size = true;
  // Every rank throws a ddl::Error once one rank has run out of inputs (in its join(), and in
  // the others' next forward) instead of shadowing them; divide_by_initial_world_size is moot.
  bool throw_on_early_termination = false;
};

// What a joined rank runs for one joinable.
class JoinHook {
 public:
  virtual ~JoinHook() = default;
  // Once per iteration of the ranks still training: issue the collectives they issue.
  virtual void main_hook() {}
  // Once all ranks have joined. is_last_joiner: this rank joined in the last iteration.
  virtual void post_hook(bool is_last_joiner) { (void)is_last_joiner; }
};

class Joinable {
 public:
  virtual ~Joinable() = default;
  virtual std::unique_ptr<JoinHook> join_hook(const JoinOptions& opts) = 0;
  virtual ProcessGroup& join_process_group() = 0;

 protected:
  // Set by the Join this joinable belongs to, while it lives.
  bool join_enabled_ = false;
  bool join_first_ = false;  // the first joinable notifies the Join for all of them
  bool join_throw_ = false;  // JoinOptions::throw_on_early_termination
  friend class Join;
};

class Join {
 public:
  // Every joinable must use the same process group; the first one's is used.
  explicit Join(std::vector<Joinable*> joinables, JoinOptions opts = {});
  // Runs join() unless it ran or an exception is unwinding (then it only detaches).
  ~Join() noexcept(false);
  Join(const Join&) = delete;
  Join& operator=(const Join&) = delete;

  // This rank is out of inputs: shadow the others until every rank has joined, then run
  // the post hooks. Collective: every rank calls it once, after its last batch.
  void join();
  // What a joinable's forward calls while a Join is active: tells the joined ranks this
  // one is still training. Returns how many ranks are (-1 when `joinable` is not the first
  // of its Join or no Join is active: nothing was sent).
  static int64_t notify_join_context(Joinable& joinable);

 private:
  void detach();
  std::vector<Joinable*> joinables_;
  std::vector<std::unique_ptr<JoinHook>> hooks_;
  JoinOptions opts_;
  bool done_ = false;
};

}  // namespace ddl::dist
