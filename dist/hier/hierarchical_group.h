// ProcessGroupHierarchical: a process group whose all-reduce (sum, average, max, min) knows
// the hosts. With up to L ranks on each of H hosts it reduces inside each host through shared
// memory, all-reduces each 1/L slice across hosts (each among one rank per host, so the ranks
// of a host share its link and it carries the bytes of one rank), and copies the slices to
// every rank of the host again. See Note [Hierarchical all-reduce]. Every other collective
// runs on the flat group it wraps, in call order. Used by init_process_group("gloo") when
// DDL_HIERARCHICAL=1 and the job has several hosts, one of them with several ranks
// (docs/dist.md, "Hierarchical all-reduce").
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ddl/dist/gloo/process_group_gloo.h>
#include <ddl/dist/process_group.h>

namespace ddl::dist {

class ProcessGroupHierarchical final : public ProcessGroup {
 public:
  // Collective over `store` (the flat group's, or any key space every rank shares):
  // host_of_rank[r] names the host of rank r (every rank passes the same list); hosts may hold
  // different numbers of ranks. Builds a local group per host and a cross-host group per
  // slice, each in its own key space of `store`. Throws ddl::Error on a list of the wrong size.
  ProcessGroupHierarchical(std::shared_ptr<ProcessGroup> flat, std::shared_ptr<Store> store,
                           std::vector<std::string> host_of_rank, GlooOptions opts = {});
  ~ProcessGroupHierarchical() override;
  std::string backend() const override { return flat_->backend(); }

  std::shared_ptr<Work> all_reduce_async(const Tensor& t, ReduceOp op = ReduceOp::Sum) override;
  std::shared_ptr<Work> broadcast_async(const Tensor& t, int root) override;
  std::shared_ptr<Work> reduce_async(const Tensor& t, int root, ReduceOp op = ReduceOp::Sum) override;
  std::shared_ptr<Work> all_gather_async(const Tensor& output, const Tensor& input) override;
  std::shared_ptr<Work> reduce_scatter_async(const Tensor& output, const Tensor& input,
                                             ReduceOp op = ReduceOp::Sum) override;
  std::shared_ptr<Work> gather_async(const Tensor& output, const Tensor& input, int root) override;
  std::shared_ptr<Work> scatter_async(const Tensor& output, const Tensor& input, int root) override;
  std::shared_ptr<Work> all_to_all_async(const Tensor& output, const Tensor& input) override;
  std::shared_ptr<Work> barrier_async() override;
  std::shared_ptr<Work> send_async(const Tensor& t, int dst, int tag = 0) override;
  std::shared_ptr<Work> recv_async(const Tensor& t, int src, int tag = 0) override;

  // The three groups' counters added up.
  CommStats stats() const override;
  void reset_stats() override;
  bool is_broken() const override;
  std::string broken_reason() const override;

  int hosts() const { return hosts_; }
  int local_size() const { return local_->size(); }
  // The slices a tensor is cut into: the most ranks any host holds.
  int slices() const { return static_cast<int>(cross_.size()); }
  const ProcessGroup& flat() const { return *flat_; }
  // "hierarchical: 2 hosts x 2 ranks; inside a host <local transport>; across hosts tcp"
  // ("2 hosts of 2+1 ranks" when they differ).
  std::string describe() const;

 private:
  std::shared_ptr<Work> enqueue(std::string desc, std::function<void()> run);
  void worker_loop();
  void hierarchical_all_reduce(const Tensor& t, ReduceOp op);

  std::shared_ptr<ProcessGroup> flat_;
  std::shared_ptr<ProcessGroupGloo> local_;  // the ranks of this host
  // cross_[k]: the owner of slice k on every host; null where this rank does not own slice k.
  std::vector<std::shared_ptr<ProcessGroupGloo>> cross_;
  std::string host_sizes_;  // "2" when every host holds 2 ranks, "2+1" when they differ
  int hosts_ = 1;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::function<void()>, std::shared_ptr<Work>>> queue_;
  bool stop_ = false;
  std::thread worker_;
};

// DDL_HIERARCHICAL: 1 on, 0 or unset off.
bool hierarchical_from_env();
// This rank's host as the hierarchy sees it: the host name (emulated hosts have their own).
std::string this_host_name();
// init_process_group's wrapping step: the hierarchical group over `flat` when the job has
// more than one host and more than one rank on some host, else `flat`, with the reason in
// *why. Collective (exchanges host names through `flat`).
std::shared_ptr<ProcessGroup> maybe_hierarchical(std::shared_ptr<ProcessGroup> flat, std::shared_ptr<Store> store,
                                                 const GlooOptions& opts, std::string* why = nullptr);

}  // namespace ddl::dist
