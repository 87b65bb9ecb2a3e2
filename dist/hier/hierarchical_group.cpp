// ProcessGroupHierarchical: the host-aware sum all-reduce, and everything else passed to
// the flat group on one worker thread, so all calls keep their order.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>

#include <ddl/dist/hier/hierarchical_group.h>
#include <ddl/tensor/error.h>
#include <ddl/tensor/factory.h>

namespace ddl::dist {

// Note [Hierarchical all-reduce]
// A flat ring over W = H·L ranks (H hosts, L ranks each) sends 2(W-1)/W of the tensor from
// every rank; the ring crosses each host's link in both directions, and with ranks numbered
// host by host the L ranks of a host put about L·2(W-1)/W / (2(H-1)/H) times the bytes of
// one rank per host through it (1.5x at 2 x 2). Here, for a tensor of n elements:
//   1. inside the host, all-reduce through shared memory (no link bytes): every local rank
//      holds the host's sum;
//   2. local rank j all-reduces its slice j (n/L elements) across hosts with rank j of every
//      other host: L rings of H ranks, each moving 2(H-1)/H · n/L per rank, so a host's
//      link carries 2(H-1)/H · n, as with one rank per host, and all L ranks use it at once;
//   3. inside the host, each rank zeroes all but its slice and the host all-reduces again
//      through shared memory: x + 0 = x, so every rank gets every slice, bit for bit.
// Every rank ends with the same bits (one reduction order per element, then copies). Step 1
// could be a reduce-scatter and step 3 an all-gather; through shared memory at memory speed
// the difference is small beside the link. This is the two-level scheme of Horovod's
// hierarchical allreduce and NCCL's tree/ring split between NVLink and the network.

namespace {

std::string describe_tensor(const char* op, const Tensor& t) {
  return std::string(op) + "(" + dtype_name(t.dtype()) + t.shape().str() + ")";
}

// Key spaces inside the store for the sub-groups.
std::shared_ptr<Store> sub_store(const std::shared_ptr<Store>& store, const std::string& name) {
  return std::make_shared<PrefixStore>("hier/" + name, store);
}

}  // namespace

bool hierarchical_from_env() {
  const char* v = std::getenv("DDL_HIERARCHICAL");
  if (!v || !*v || std::string(v) == "0") return false;
  DDL_CHECK(std::string(v) == "1", "DDL_HIERARCHICAL: expected 0 or 1, got '", v, "'");
  return true;
}

std::string this_host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

ProcessGroupHierarchical::ProcessGroupHierarchical(std::shared_ptr<ProcessGroup> flat, std::shared_ptr<Store> store,
                                                   std::vector<std::string> host_of_rank, GlooOptions opts)
    : ProcessGroup(flat ? flat->rank() : 0, flat ? flat->size() : 1), flat_(std::move(flat)) {
  DDL_CHECK(flat_ != nullptr, "ProcessGroupHierarchical: no flat group");
  DDL_CHECK(static_cast<int>(host_of_rank.size()) == size(), "ProcessGroupHierarchical: ", host_of_rank.size(),
            " host names for ", size(), " ranks");
  // Hosts in the order of their first rank; local ranks in rank order.
  std::vector<std::string> hosts;
  std::map<std::string, std::vector<int>> members;
  for (int r = 0; r < size(); ++r) {
    if (!members.count(host_of_rank[r])) hosts.push_back(host_of_rank[r]);
    members[host_of_rank[r]].push_back(r);
  }
  const size_t l = members[hosts[0]].size();
  for (const auto& h : hosts)
    DDL_CHECK(members[h].size() == l, "ProcessGroupHierarchical: host ", h, " has ", members[h].size(),
              " ranks but host ", hosts[0], " has ", l, " (every host needs the same number)");
  const std::string& mine = host_of_rank[rank()];
  const auto& mates = members[mine];
  const int local_rank = static_cast<int>(std::find(mates.begin(), mates.end(), rank()) - mates.begin());
  const int host_index = static_cast<int>(std::find(hosts.begin(), hosts.end(), mine) - hosts.begin());
  hosts_ = static_cast<int>(hosts.size());
  // The local groups first, on every host at once, then the cross-host ones.
  local_ = std::make_shared<ProcessGroupGloo>(sub_store(store, "local" + std::to_string(host_index)), local_rank,
                                              static_cast<int>(l), opts);
  GlooOptions cross_opts = opts;
  cross_opts.shm = 0;  // one rank per host: shared memory could never apply
  cross_ = std::make_shared<ProcessGroupGloo>(sub_store(store, "cross" + std::to_string(local_rank)), host_index,
                                              hosts_, cross_opts);
  worker_ = std::thread([this] { worker_loop(); });
}

ProcessGroupHierarchical::~ProcessGroupHierarchical() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

std::string ProcessGroupHierarchical::describe() const {
  return "hierarchical: " + std::to_string(hosts_) + " hosts x " + std::to_string(local_->size()) +
         " ranks; inside a host " + local_->transport() + "; across hosts " + cross_->transport();
}

std::shared_ptr<Work> ProcessGroupHierarchical::enqueue(std::string desc, std::function<void()> run) {
  auto work = std::make_shared<Work>(std::move(desc));
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.emplace_back(std::move(run), work);
  }
  cv_.notify_one();
  return work;
}

void ProcessGroupHierarchical::worker_loop() {
  for (;;) {
    std::pair<std::function<void()>, std::shared_ptr<Work>> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    std::exception_ptr error;
    try {
      task.first();
    } catch (...) {
      error = std::current_exception();
    }
    task.second->finish(error);
  }
}

void ProcessGroupHierarchical::hierarchical_sum(const Tensor& t) {
  // See Note [Hierarchical all-reduce].
  const Tensor flat = t.is_contiguous() ? t.view({-1}) : t.contiguous().view({-1});
  const int64_t n = flat.numel(), l = local_->size(), j = local_->rank();
  local_->all_reduce(flat);
  const int64_t begin = n * j / l, end = n * (j + 1) / l;
  if (end > begin) cross_->all_reduce(flat.narrow(0, begin, end - begin));
  if (begin > 0) flat.narrow(0, 0, begin).zero_();
  if (end < n) flat.narrow(0, end, n - end).zero_();
  local_->all_reduce(flat);
  if (!t.is_contiguous()) t.copy_(flat.view(t.shape()));
}

std::shared_ptr<Work> ProcessGroupHierarchical::all_reduce_async(const Tensor& t, ReduceOp op) {
  if (op == ReduceOp::Sum || op == ReduceOp::Avg)
    return enqueue(describe_tensor("all_reduce", t), [this, t, op] {
      hierarchical_sum(t);
      if (op == ReduceOp::Avg) t.div_(static_cast<double>(size()));
    });
  // Step 3 rebuilds the tensor from zeros, which only a sum leaves alone.
  return enqueue(describe_tensor("all_reduce", t), [this, t, op] { flat_->all_reduce(t, op); });
}
std::shared_ptr<Work> ProcessGroupHierarchical::broadcast_async(const Tensor& t, int root) {
  return enqueue(describe_tensor("broadcast", t), [this, t, root] { flat_->broadcast(t, root); });
}
std::shared_ptr<Work> ProcessGroupHierarchical::reduce_async(const Tensor& t, int root, ReduceOp op) {
  return enqueue(describe_tensor("reduce", t), [this, t, root, op] { flat_->reduce(t, root, op); });
}
std::shared_ptr<Work> ProcessGroupHierarchical::all_gather_async(const Tensor& output, const Tensor& input) {
  return enqueue(describe_tensor("all_gather", input), [this, output, input] { flat_->all_gather(output, input); });
}
std::shared_ptr<Work> ProcessGroupHierarchical::reduce_scatter_async(const Tensor& output, const Tensor& input,
                                                                     ReduceOp op) {
  return enqueue(describe_tensor("reduce_scatter", input),
                 [this, output, input, op] { flat_->reduce_scatter(output, input, op); });
}
std::shared_ptr<Work> ProcessGroupHierarchical::gather_async(const Tensor& output, const Tensor& input, int root) {
  return enqueue(describe_tensor("gather", input), [this, output, input, root] { flat_->gather(output, input, root); });
}
std::shared_ptr<Work> ProcessGroupHierarchical::scatter_async(const Tensor& output, const Tensor& input, int root) {
  return enqueue(describe_tensor("scatter", output),
                 [this, output, input, root] { flat_->scatter(output, input, root); });
}
std::shared_ptr<Work> ProcessGroupHierarchical::all_to_all_async(const Tensor& output, const Tensor& input) {
  return enqueue(describe_tensor("all_to_all", input), [this, output, input] { flat_->all_to_all(output, input); });
}
std::shared_ptr<Work> ProcessGroupHierarchical::barrier_async() {
  return enqueue("barrier()", [this] { flat_->barrier(); });
}
// Point to point bypasses the queue, as in every backend.
std::shared_ptr<Work> ProcessGroupHierarchical::send_async(const Tensor& t, int dst, int tag) {
  return flat_->send_async(t, dst, tag);
}
std::shared_ptr<Work> ProcessGroupHierarchical::recv_async(const Tensor& t, int src, int tag) {
  return flat_->recv_async(t, src, tag);
}

CommStats ProcessGroupHierarchical::stats() const {
  CommStats s = flat_->stats();
  for (const ProcessGroup* g :
       {static_cast<const ProcessGroup*>(local_.get()), static_cast<const ProcessGroup*>(cross_.get())}) {
    const CommStats o = g->stats();
    for (int k = 0; k < kNumOpKinds; ++k) {
      s.ops[k].bytes_sent += o.ops[k].bytes_sent;
      s.ops[k].bytes_received += o.ops[k].bytes_received;
    }
  }
  return s;
}
void ProcessGroupHierarchical::reset_stats() {
  flat_->reset_stats();
  local_->reset_stats();
  cross_->reset_stats();
}
bool ProcessGroupHierarchical::is_broken() const {
  return flat_->is_broken() || local_->is_broken() || cross_->is_broken();
}
std::string ProcessGroupHierarchical::broken_reason() const {
  if (flat_->is_broken()) return flat_->broken_reason();
  if (local_->is_broken()) return "inside host: " + local_->broken_reason();
  if (cross_->is_broken()) return "across hosts: " + cross_->broken_reason();
  return "";
}

std::shared_ptr<ProcessGroup> maybe_hierarchical(std::shared_ptr<ProcessGroup> flat, std::shared_ptr<Store> store,
                                                 const GlooOptions& opts, std::string* why) {
  // Host names through the flat group, as fixed-width bytes.
  constexpr int64_t kWidth = 64;
  std::string name = this_host_name();
  name.resize(kWidth, '\0');
  std::vector<int64_t> mine(name.begin(), name.end());
  const Tensor all = zeros({flat->size() * kWidth}, DType::Int64);
  flat->all_gather(all, from_vector(mine));
  const auto v = to_vector<int64_t>(all);
  std::vector<std::string> host_of_rank;
  std::map<std::string, int> count;
  for (int r = 0; r < flat->size(); ++r) {
    std::string h;
    for (int64_t k = 0; k < kWidth && v[r * kWidth + k] != 0; ++k) h += static_cast<char>(v[r * kWidth + k]);
    host_of_rank.push_back(h);
    ++count[h];
  }
  const auto say = [&](const std::string& s) {
    if (why) *why = s;
    return flat;
  };
  if (count.size() < 2) return say("one host: the flat group's all_reduce is already local");
  const int l = count.begin()->second;
  for (const auto& [h, c] : count)
    if (c != l) return say("hosts hold different numbers of ranks (" + h + ": " + std::to_string(c) + ")");
  if (l < 2) return say("one rank per host: nothing to reduce inside a host");
  if (why) why->clear();
  return std::make_shared<ProcessGroupHierarchical>(std::move(flat), std::move(store), std::move(host_of_rank), opts);
}

}  // namespace ddl::dist
