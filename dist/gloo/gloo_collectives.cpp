// Gloo calls for each collective (see gloo_collectives.h). Reductions are written here
// rather than taken from gloo/math.h so int64 and every ReduceOp share one table.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/context.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <thread>

#include <ddl/base/error.h>
#include <ddl/dist/gloo/gloo_collectives.h>
#include <ddl/dist/reduce_dtypes.h>
#include <ddl/tensor/core/dtype.h>

namespace ddl::dist::detail {

void GlooStoreAdapter::set(const std::string& key, const std::vector<char>& data) {
  store_->set(key, std::string(data.begin(), data.end()));
}

std::vector<char> GlooStoreAdapter::get(const std::string& key) {
  wait({key}, store_->timeout());
  std::string v = store_->get(key);
  const bool address_key = size_ > 1 && !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
                             return std::isdigit(static_cast<unsigned char>(c));
                           });
  if (address_key) {
    const size_t entry = gloo::transport::tcp::Address().bytes().size();
    DDL_CHECK(v.size() == entry * (size_ - 1), "rendezvous: the store", where_, " returned ", v.size(),
              " bytes under key '", key, "', rank ", key, "'s addresses for Gloo's pairs, where ", size_ - 1, " x ",
              entry,
              " bytes belong: that key holds something other than a ddl rank's addresses (another program "
              "or job writing the same store and keys, or a store that is not a ddl or PyTorch one)");
  }
  return {v.begin(), v.end()};
}

void GlooStoreAdapter::wait(const std::vector<std::string>& keys) { wait(keys, store_->timeout()); }

// Polls rather than blocks, so that a fatal error another rank reports ends the wait at
// once (a rank that cannot start must not leave the others waiting for the timeout).
void GlooStoreAdapter::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now(), deadline = std::min(deadline_, start + timeout);
  {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_for_ = join_keys(keys);
  }
  auto pause = std::chrono::milliseconds(1);
  while (!store_->check(keys)) {
    if (store_->check({kFatalKey})) throw PeerStartupError(store_->get(kFatalKey));
    DDL_CHECK(Clock::now() < deadline, "store: timed out after ",
              std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count(),
              " ms waiting for key(s) ", join_keys(keys));
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - Clock::now()));
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  std::lock_guard<std::mutex> lock(mu_);
  waiting_for_.clear();
}

std::string GlooStoreAdapter::waiting_for() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_for_;
}

namespace {

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

// c[i] = a[i] (op) b[i]; c may alias a or b.
template <typename T, typename F>
void apply(void* c, const void* a, const void* b, size_t n, F f) {
  auto* o = static_cast<T*>(c);
  auto* x = static_cast<const T*>(a);
  auto* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
}
template <typename T>
void sum_fn(void* c, const void* a, const void* b, size_t n) {
  apply<T>(c, a, b, n, [](T x, T y) { return T(x + y); });
}
template <typename T>
void max_fn(void* c, const void* a, const void* b, size_t n) {
  apply<T>(c, a, b, n, [](T x, T y) { return std::max(x, y); });
}
template <typename T>
void min_fn(void* c, const void* a, const void* b, size_t n) {
  apply<T>(c, a, b, n, [](T x, T y) { return std::min(x, y); });
}

// Avg reduces with Sum; the caller divides by the world size afterwards.
template <typename T>
ReduceFn reduce_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::Max:
      return &max_fn<T>;
    case ReduceOp::Min:
      return &min_fn<T>;
    default:
      return &sum_fn<T>;
  }
}

template <typename T>
void scale_avg(const Tensor& t, int n) {
  T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = p[i] / T(n);
}

void finish_avg(const Tensor& t, ReduceOp op, int n) {
  if (op != ReduceOp::Avg) return;
  DDL_DISPATCH_FLOAT(t.dtype(), "all_reduce(avg)", [&] { scale_avg<scalar_t>(t, n); });
}

}  // namespace

Traffic gloo_all_reduce(const GlooCall& c, const Tensor& t, ReduceOp op) {
  dispatch_reducible(t.dtype(), "all_reduce", [&](auto tag) {
    using scalar_t = decltype(tag);
    gloo::AllreduceOptions o(c.ctx);
    o.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    o.setOutput<scalar_t>(t.data<scalar_t>(), t.numel());
    o.setReduceFunction(reduce_fn<scalar_t>(op));
    o.setTag(c.tag);
    o.setTimeout(c.timeout);
    gloo::allreduce(o);
  });
  finish_avg(t, op, c.ctx->size);
  return ring_allreduce_traffic(t.nbytes(), t.element_size(), c.ctx->size, c.ctx->rank);
}

Traffic gloo_broadcast(const GlooCall& c, const Tensor& t, int root) {
  DDL_DISPATCH_NUMERIC(t.dtype(), "broadcast", [&] {
    gloo::BroadcastOptions o(c.ctx);
    o.setOutput<scalar_t>(t.data<scalar_t>(), t.numel());
    o.setRoot(root);
    o.setTag(c.tag);
    o.setTimeout(c.timeout);
    gloo::broadcast(o);
  });
  return tree_broadcast_traffic(t.nbytes(), c.ctx->size, c.ctx->rank, root);
}

Traffic gloo_reduce(const GlooCall& c, const Tensor& t, int root, ReduceOp op) {
  const bool is_root = c.ctx->rank == root;
  // Non-roots reduce into scratch so their own tensor is left unchanged.
  std::vector<char> scratch(is_root ? 0 : t.nbytes());
  DDL_DISPATCH_NUMERIC(t.dtype(), "reduce", [&] {
    gloo::ReduceOptions o(c.ctx);
    if (is_root) {
      o.setOutput<scalar_t>(t.data<scalar_t>(), t.numel());
    } else {
      o.setInput<scalar_t>(t.data<scalar_t>(), t.numel());
      o.setOutput<scalar_t>(reinterpret_cast<scalar_t*>(scratch.data()), t.numel());
    }
    o.setRoot(root);
    o.setReduceFunction(reduce_fn<scalar_t>(op));
    o.setTag(c.tag);
    o.setTimeout(c.timeout);
    gloo::reduce(o);
  });
  if (is_root) finish_avg(t, op, c.ctx->size);
  return ring_reduce_traffic(t.nbytes(), t.element_size(), c.ctx->size, c.ctx->rank, root);
}

Traffic gloo_all_gather(const GlooCall& c, const Tensor& out, const Tensor& in) {
  DDL_DISPATCH_NUMERIC(in.dtype(), "all_gather", [&] {
    gloo::AllgatherOptions o(c.ctx);
    o.setInput<scalar_t>(in.data<scalar_t>(), in.numel());
    o.setOutput<scalar_t>(out.data<scalar_t>(), out.numel());
    o.setTag(c.tag);
    o.setTimeout(c.timeout);
    gloo::allgather(o);
  });
  return ring_allgather_traffic(in.nbytes(), c.ctx->size);
}

Traffic gloo_gather(const GlooCall& c, const Tensor& out, const Tensor& in, int root) {
  DDL_DISPATCH_NUMERIC(in.dtype(), "gather", [&] {
    gloo::GatherOptions o(c.ctx);
    o.setInput<scalar_t>(in.data<scalar_t>(), in.numel());
    if (c.ctx->rank == root) o.setOutput<scalar_t>(out.data<scalar_t>(), out.numel());
    o.setRoot(root);
    o.setTag(c.tag);
    o.setTimeout(c.timeout);
    gloo::gather(o);
  });
  return gather_traffic(in.nbytes(), c.ctx->size, c.ctx->rank, root);
}

Traffic gloo_scatter(const GlooCall& c, const Tensor& out, const Tensor& in, int root) {
  DDL_DISPATCH_NUMERIC(out.dtype(), "scatter", [&] {
    gloo::ScatterOptions o(c.ctx);
    if (c.ctx->rank == root) {
      std::vector<scalar_t*> parts;
      for (int r = 0; r < c.ctx->size; ++r) parts.push_back(in.data<scalar_t>() + r * out.numel());
      o.setInputs<scalar_t>(parts, out.numel());
    }
    o.setOutput<scalar_t>(out.data<scalar_t>(), out.numel());
    o.setRoot(root);
    o.setTag(c.tag);
    o.setTimeout(c.timeout);
    gloo::scatter(o);
  });
  return scatter_traffic(out.nbytes(), c.ctx->size, c.ctx->rank, root);
}

Traffic gloo_all_to_all(const GlooCall& c, const Tensor& out, const Tensor& in) {
  DDL_DISPATCH_NUMERIC(in.dtype(), "all_to_all", [&] {
    gloo::AlltoallOptions o(c.ctx);
    o.setInput<scalar_t>(in.data<scalar_t>(), in.numel());
    o.setOutput<scalar_t>(out.data<scalar_t>(), out.numel());
    o.setTag(c.tag);
    o.setTimeout(c.timeout);
    gloo::alltoall(o);
  });
  return pairwise_traffic(in.nbytes() / c.ctx->size, c.ctx->size);
}

Traffic gloo_barrier(const GlooCall& c) {
  gloo::BarrierOptions o(c.ctx);
  o.setTag(c.tag);
  o.setTimeout(c.timeout);
  gloo::barrier(o);
  return {};
}

// Note [Ring reduce-scatter]: Gloo 2022 has no option-style reduce-scatter, and an
// all-reduce would send twice the bytes. Ring: at step s (0..n-2) rank r sends its running
// sum of chunk (r-s-1) mod n to rank r+1 and adds the chunk (r-s-2) mod n arriving from
// rank r-1; after n-1 steps chunk r holds the sum over all ranks. (n-1)/n · bytes each way.
Traffic gloo_reduce_scatter(const GlooCall& c, const Tensor& out, const Tensor& in, ReduceOp op) {
  const int n = c.ctx->size, r = c.ctx->rank;
  const size_t chunk = out.nbytes();
  std::vector<char> acc(static_cast<const char*>(in.raw_data()), static_cast<const char*>(in.raw_data()) + in.nbytes());
  std::vector<char> tmp(chunk);
  ReduceFn fn = nullptr;
  DDL_DISPATCH_NUMERIC(in.dtype(), "reduce_scatter", [&] { fn = reduce_fn<scalar_t>(op); });
  auto acc_buf = c.ctx->createUnboundBuffer(acc.data(), acc.size());
  auto tmp_buf = c.ctx->createUnboundBuffer(tmp.data(), tmp.size());
  const uint64_t slot = gloo::Slot::build(0x20, c.tag);  // a prefix Gloo's own ops don't use
  for (int s = 0; s + 1 < n && chunk > 0; ++s) {
    const int send_chunk = ((r - s - 1) % n + n) % n;
    const int recv_chunk = ((r - s - 2) % n + n) % n;
    tmp_buf->recv((r + n - 1) % n, slot, 0, chunk);
    acc_buf->send((r + 1) % n, slot, send_chunk * chunk, chunk);
    tmp_buf->waitRecv(c.timeout);
    fn(acc.data() + recv_chunk * chunk, acc.data() + recv_chunk * chunk, tmp.data(), out.numel());
    acc_buf->waitSend(c.timeout);
  }
  std::memcpy(out.raw_data(), acc.data() + r * chunk, chunk);
  finish_avg(out, op, n);
  return pairwise_traffic(chunk, n);
}

std::vector<std::string> gloo_exchange_records(const GlooCall& c, const std::string& mine, Traffic* traffic) {
  constexpr size_t kRecord = 256;
  std::vector<char> in(kRecord, 0), out(kRecord * c.ctx->size, 0);
  std::memcpy(in.data(), mine.data(), std::min(mine.size(), kRecord - 1));
  gloo::AllgatherOptions o(c.ctx);
  o.setInput<char>(in.data(), kRecord);
  o.setOutput<char>(out.data(), out.size());
  o.setTag(c.tag);
  o.setTimeout(c.timeout);
  gloo::allgather(o);
  std::vector<std::string> records;
  for (int r = 0; r < c.ctx->size; ++r) records.emplace_back(out.data() + r * kRecord);
  *traffic = ring_allgather_traffic(kRecord, c.ctx->size);
  return records;
}

}  // namespace ddl::dist::detail
