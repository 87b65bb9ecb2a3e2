// ProcessGroupHierarchical: the host-aware all-reduce, and everything else passed to the
// flat group on one worker thread, so all calls keep their order.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>

#include <ddl/base/error.h>
#include <ddl/dist/hier/hierarchical_group.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::dist {

// Note [Hierarchical all-reduce]
// A flat ring over W = H·L ranks (H hosts, L ranks each) sends 2(W-1)/W of the tensor from
// every rank; the ring crosses each host's link in both directions, and with ranks numbered
// host by host the L ranks of a host put about L·2(W-1)/W / (2(H-1)/H) times the bytes of
// one rank per host through it (1.5x at 2 x 2). Here, for a tensor of n elements cut into
// L slices (L: the most ranks on any host; host h holds L_h of them):
//   1. inside the host, all-reduce with the op through shared memory (no link bytes):
//      every local rank holds the host's result;
//   2. slice k (n/L elements) is all-reduced with the op across hosts by its owner on each
//      host, local rank k mod L_h: L rings of H ranks, each moving 2(H-1)/H · n/L per rank,
//      so a host's link carries 2(H-1)/H · n, as with one rank per host. A rank that owns
//      several slices (a host with fewer ranks) runs their rings in slice order, so no two
//      ranks wait on each other in opposite orders;
//   3. inside the host, each rank zeroes all but its slices and the host sums the tensor's
//      bits as integers of the same width through shared memory: x + 0 = x for every bit
//      pattern (-0.0 and NaN included, which a float sum would not keep), so every rank gets
//      every slice, bit for bit, whatever the op.
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
  size_t slices = 0;
  bool equal = true;
  for (const auto& h : hosts) {
    slices = std::max(slices, members[h].size());
    equal = equal && members[h].size() == members[hosts[0]].size();
    host_sizes_ += (host_sizes_.empty() ? "" : "+") + std::to_string(members[h].size());
  }
  if (equal) host_sizes_ = std::to_string(slices);
  const std::string& mine = host_of_rank[rank()];
  const auto& mates = members[mine];
  const int l = static_cast<int>(mates.size());
  const int local_rank = static_cast<int>(std::find(mates.begin(), mates.end(), rank()) - mates.begin());
  const int host_index = static_cast<int>(std::find(hosts.begin(), hosts.end(), mine) - hosts.begin());
  hosts_ = static_cast<int>(hosts.size());
  // The local groups first, on every host at once, then the cross-host ones in slice order.
  local_ =
      std::make_shared<ProcessGroupGloo>(sub_store(store, "local" + std::to_string(host_index)), local_rank, l, opts);
  GlooOptions cross_opts = opts;
  cross_opts.shm = 0;  // one rank per host: shared memory could never apply
  cross_.resize(slices);
  for (int k = local_rank; k < static_cast<int>(slices); k += l)
    cross_[k] = std::make_shared<ProcessGroupGloo>(sub_store(store, "cross" + std::to_string(k)), host_index, hosts_,
                                                   cross_opts);
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
  std::string across = "tcp";
  for (const auto& g : cross_)
    if (g) across = g->transport();
  return "hierarchical: " + std::to_string(hosts_) + " hosts " +
         (host_sizes_.find('+') == std::string::npos ? "x " : "of ") + host_sizes_ + " ranks; inside a host " +
         local_->transport() + "; across hosts " + across;
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

void ProcessGroupHierarchical::hierarchical_all_reduce(const Tensor& t, ReduceOp op) {
  // See Note [Hierarchical all-reduce].
  const Tensor flat = t.is_contiguous() ? t.view({-1}) : t.contiguous().view({-1});
  const int64_t n = flat.numel(), slices = static_cast<int64_t>(cross_.size());
  if (n == 0) return;  // every rank holds the same shape: all skip together
  const auto begin = [&](int64_t k) { return n * k / slices; };
  local_->all_reduce(flat, op);
  for (int64_t k = 0; k < slices; ++k)
    if (cross_[k] && begin(k + 1) > begin(k))
      cross_[k]->all_reduce(flat.narrow(0, begin(k), begin(k + 1) - begin(k)), op);
  if (local_->size() > 1) {
    // Step 3 on the bits: the same bytes seen as integers of the element's width, or for
    // 2-byte elements (float16, bfloat16) as byte pairs: the groups sum no 16-bit integers,
    // and a byte plus zeros never carries.
    static const DType kBits[] = {DType::UInt8, DType::UInt8, DType::Int16, DType::Int32,
                                  DType::Int32, DType::Int32, DType::Int32, DType::Int64};
    const size_t width = dtype_size(flat.dtype());
    DDL_ASSERT(width >= 1 && width <= 8 && width != 3, "hierarchical all_reduce: element of ", width, " bytes");
    const int64_t per = width == 2 ? 2 : 1;  // bits elements per tensor element
    const Tensor bits = from_blob(flat.raw_data(), {n * per}, kBits[width - 1]);
    for (int64_t k = 0; k < slices; ++k)
      if (!cross_[k] && begin(k + 1) > begin(k))
        bits.narrow(0, begin(k) * per, (begin(k + 1) - begin(k)) * per).zero_();
    local_->all_reduce(bits);
  }
  if (!t.is_contiguous()) t.copy_(flat.view(t.shape()));
}

std::shared_ptr<Work> ProcessGroupHierarchical::all_reduce_async(const Tensor& t, ReduceOp op) {
  DDL_CHECK(op != ReduceOp::Avg || (is_floating(t.dtype()) && !is_reduced_float(t.dtype())),
            "all_reduce: ReduceOp::Avg needs a float32 or float64 tensor, got ", dtype_name(t.dtype()), t.shape(),
            " (use Sum and divide)");
  // Avg sums and divides once by the world size, as the flat group does.
  const ReduceOp inner = op == ReduceOp::Avg ? ReduceOp::Sum : op;
  return enqueue(describe_tensor("all_reduce", t), [this, t, op, inner] {
    hierarchical_all_reduce(t, inner);
    if (op == ReduceOp::Avg) t.div_(static_cast<double>(size()));
  });
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
  std::vector<const ProcessGroup*> subs{local_.get()};
  for (const auto& g : cross_)
    if (g) subs.push_back(g.get());
  for (const ProcessGroup* g : subs) {
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
  for (const auto& g : cross_)
    if (g) g->reset_stats();
}
bool ProcessGroupHierarchical::is_broken() const {
  if (flat_->is_broken() || local_->is_broken()) return true;
  for (const auto& g : cross_)
    if (g && g->is_broken()) return true;
  return false;
}
std::string ProcessGroupHierarchical::broken_reason() const {
  if (flat_->is_broken()) return flat_->broken_reason();
  if (local_->is_broken()) return "inside host: " + local_->broken_reason();
  for (const auto& g : cross_)
    if (g && g->is_broken()) return "across hosts: " + g->broken_reason();
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
  int most = 0;
  for (const auto& hc : count) most = std::max(most, hc.second);
  if (most < 2) return say("one rank per host: nothing to reduce inside a host");
  if (why) why->clear();
  return std::make_shared<ProcessGroupHierarchical>(std::move(flat), std::move(store), std::move(host_of_rank), opts);
}

}  // namespace ddl::dist
