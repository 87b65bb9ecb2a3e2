// ProcessGroupNccl's collectives and point-to-point calls: argument checks, which operands
// are written (launch stages non-contiguous ones), byte counts, DDL_DEBUG fingerprints, and
// the NCCL calls each launch issues (the launch path itself is in process_group_nccl.cpp;
// see Note [NCCL stream ordering] there).
#include <ddl/dist/debug_check.h>
#include <ddl/dist/nccl/process_group_nccl_internal.h>

namespace ddl::dist {

using detail::NcclGroup;

namespace {

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::Float32:
      return ncclFloat32;
    case DType::Float64:
      return ncclFloat64;
    case DType::Int64:
      return ncclInt64;
    case DType::Int32:
      return ncclInt32;
    case DType::UInt8:
      return ncclUint8;
    case DType::Int8:
      return ncclInt8;
    case DType::Float16:
      return ncclFloat16;
    case DType::BFloat16:
      return ncclBfloat16;
    default:
      break;
  }
  DDL_CHECK(false, "nccl: dtype ", t, " is not supported");
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return ncclSum;
    case ReduceOp::Avg:
      return ncclAvg;
    case ReduceOp::Max:
      return ncclMax;
    case ReduceOp::Min:
      return ncclMin;
  }
  return ncclSum;
}

void nccl_check_tensor(const Tensor& t, const char* op, const char* what = "tensor") {
  DDL_CHECK(t.defined(), op, ": the ", what, " is undefined");
  DDL_CHECK(t.device().is_cuda(), op, ": the nccl backend works on CUDA tensors, got ", describe(t), " on ", t.device(),
            " (move it with .to(Device::cuda(i)), or use the gloo backend for CPU tensors)");
  DDL_CHECK(t.dtype() != DType::Bool, op, ": dtype bool is not supported (use uint8)");
}

void check_pair(const Tensor& out, const Tensor& in, const char* op) {
  DDL_CHECK(out.device() == in.device(), op, ": input and output must be on the same GPU, got ", in.device(), " and ",
            out.device());
}

void nccl_check_reduce_op(const Tensor& t, ReduceOp op, const char* name) {
  DDL_CHECK(op != ReduceOp::Avg || is_floating(t.dtype()), name, ": ReduceOp::Avg needs a floating tensor, got ",
            describe(t), " (use Sum and divide)");
}

void check_root(int root, int n, const char* op) {
  DDL_CHECK(root >= 0 && root < n, op, ": root ", root, " outside [0, ", n, ")");
}

char* bytes_at(const Tensor& t, int64_t chunk, int64_t index) {
  return static_cast<char*>(t.raw_data()) + chunk * index * static_cast<int64_t>(t.element_size());
}

// Byte counters: NCCL picks ring or tree per call, so these count the ring schedule
// (see docs/dist.md, "The nccl backend").
int64_t ring_allreduce_bytes(int64_t bytes, int n) { return n == 1 ? 0 : 2 * (n - 1) * bytes / n; }
// Broadcast and reduce pipeline along a chain from (or to) the root: the root only sends
// (receives), the last rank of the chain only receives (sends), the others do both.
std::pair<int64_t, int64_t> chain_bytes(int64_t bytes, int n, int rank, int root, bool towards_root) {
  if (n == 1) return {0, 0};
  const int pos = (rank - root + n) % n;  // 0 = root
  const bool first = pos == 0, last = pos == n - 1;
  int64_t out = first ? bytes : last ? 0 : bytes, in = first ? 0 : bytes;
  if (towards_root) std::swap(out, in);
  return {out, in};
}

}  // namespace

std::shared_ptr<Work> ProcessGroupNccl::all_reduce_async(const Tensor& t, ReduceOp op) {
  nccl_check_tensor(t, "all_reduce");
  nccl_check_reduce_op(t, op, "all_reduce");
  std::string desc = "all_reduce(" + describe(t) + ", " + reduce_op_name(op) + ")";
  const std::string fp = "all_reduce(" + detail::debug_signature(t) + ", " + reduce_op_name(op) + ")";
  if (t.numel() == 0) return finished_work(desc, fp);
  const int64_t b = ring_allreduce_bytes(static_cast<int64_t>(t.nbytes()), size());
  return launch(OpKind::AllReduce, std::move(desc), fp, "every other rank", t.device().index, kCollectiveLane,
                {{t, true}}, b, b, [op](const Lane& l, const std::vector<Tensor>& bufs, const std::string& what) {
                  const Tensor& buf = bufs[0];
                  DDL_NCCL_CHECK(ncclAllReduce(buf.raw_data(), buf.raw_data(), buf.numel(), nccl_type(buf.dtype()),
                                               nccl_op(op), l.comm, l.stream),
                                 l.comm, what);
                });
}

std::shared_ptr<Work> ProcessGroupNccl::broadcast_async(const Tensor& t, int root) {
  nccl_check_tensor(t, "broadcast");
  check_root(root, size(), "broadcast");
  std::string desc = "broadcast(" + describe(t) + ", root=" + std::to_string(root) + ")";
  const std::string fp = "broadcast(" + detail::debug_signature(t) + ", root=" + std::to_string(root) + ")";
  if (t.numel() == 0) return finished_work(desc, fp);
  auto [sent, received] = chain_bytes(static_cast<int64_t>(t.nbytes()), size(), rank(), root, false);
  return launch(
      OpKind::Broadcast, std::move(desc), fp, "every other rank", t.device().index, kCollectiveLane, {{t, true}}, sent,
      received, [root](const Lane& l, const std::vector<Tensor>& bufs, const std::string& what) {
        const Tensor& buf = bufs[0];
        DDL_NCCL_CHECK(
            ncclBroadcast(buf.raw_data(), buf.raw_data(), buf.numel(), nccl_type(buf.dtype()), root, l.comm, l.stream),
            l.comm, what);
      });
}

std::shared_ptr<Work> ProcessGroupNccl::reduce_async(const Tensor& t, int root, ReduceOp op) {
  nccl_check_tensor(t, "reduce");
  nccl_check_reduce_op(t, op, "reduce");
  check_root(root, size(), "reduce");
  const std::string args = ", root=" + std::to_string(root) + ", " + reduce_op_name(op) + ")";
  std::string desc = "reduce(" + describe(t) + args;
  const std::string fp = "reduce(" + detail::debug_signature(t) + args;
  if (t.numel() == 0) return finished_work(desc, fp);
  const bool is_root = rank() == root;
  auto [sent, received] = chain_bytes(static_cast<int64_t>(t.nbytes()), size(), rank(), root, true);
  // Only the root's buffer receives the result (NCCL takes recvbuff = nullptr elsewhere),
  // so other ranks' tensors stay unchanged as the interface promises.
  return launch(OpKind::Reduce, std::move(desc), fp, "every other rank", t.device().index, kCollectiveLane,
                {{t, is_root}}, sent, received,
                [root, op, is_root](const Lane& l, const std::vector<Tensor>& bufs, const std::string& what) {
                  const Tensor& buf = bufs[0];
                  DDL_NCCL_CHECK(ncclReduce(buf.raw_data(), is_root ? buf.raw_data() : nullptr, buf.numel(),
                                            nccl_type(buf.dtype()), nccl_op(op), root, l.comm, l.stream),
                                 l.comm, what);
                });
}

std::shared_ptr<Work> ProcessGroupNccl::all_gather_async(const Tensor& out, const Tensor& in) {
  nccl_check_tensor(in, "all_gather", "input");
  nccl_check_tensor(out, "all_gather", "output");
  check_pair(out, in, "all_gather");
  DDL_CHECK(out.dtype() == in.dtype() && out.numel() == size() * in.numel(),
            "all_gather: output must hold world size (", size(), ") x input, got output ", describe(out), " for input ",
            describe(in));
  std::string desc = "all_gather(" + describe(in) + ")";
  const std::string fp = "all_gather(" + detail::debug_signature(in) + ")";
  if (in.numel() == 0) return finished_work(desc, fp);
  const int64_t b = static_cast<int64_t>(in.nbytes()) * (size() - 1);
  return launch(
      OpKind::AllGather, std::move(desc), fp, "every other rank", in.device().index, kCollectiveLane,
      {{in, false}, {out, true}}, b, b, [](const Lane& l, const std::vector<Tensor>& bufs, const std::string& what) {
        const Tensor &src = bufs[0], &dst = bufs[1];
        DDL_NCCL_CHECK(
            ncclAllGather(src.raw_data(), dst.raw_data(), src.numel(), nccl_type(src.dtype()), l.comm, l.stream),
            l.comm, what);
      });
}

std::shared_ptr<Work> ProcessGroupNccl::reduce_scatter_async(const Tensor& out, const Tensor& in, ReduceOp op) {
  nccl_check_tensor(in, "reduce_scatter", "input");
  nccl_check_tensor(out, "reduce_scatter", "output");
  check_pair(out, in, "reduce_scatter");
  nccl_check_reduce_op(in, op, "reduce_scatter");
  DDL_CHECK(out.dtype() == in.dtype() && in.numel() == size() * out.numel(),
            "reduce_scatter: input must hold world size (", size(), ") x output, got input ", describe(in),
            " for output ", describe(out));
  std::string desc = "reduce_scatter(" + describe(in) + ", " + reduce_op_name(op) + ")";
  const std::string fp = "reduce_scatter(" + detail::debug_signature(in) + ", " + reduce_op_name(op) + ")";
  if (out.numel() == 0) return finished_work(desc, fp);
  const int64_t b = static_cast<int64_t>(out.nbytes()) * (size() - 1);
  return launch(OpKind::ReduceScatter, std::move(desc), fp, "every other rank", in.device().index, kCollectiveLane,
                {{in, false}, {out, true}}, b, b,
                [op](const Lane& l, const std::vector<Tensor>& bufs, const std::string& what) {
                  const Tensor &src = bufs[0], &dst = bufs[1];
                  DDL_NCCL_CHECK(ncclReduceScatter(src.raw_data(), dst.raw_data(), dst.numel(), nccl_type(src.dtype()),
                                                   nccl_op(op), l.comm, l.stream),
                                 l.comm, what);
                });
}

// Gather, scatter and all-to-all are grouped sends and receives: one NCCL launch each;
// a rank's own chunk is a device-to-device copy on the same stream.
std::shared_ptr<Work> ProcessGroupNccl::gather_async(const Tensor& out, const Tensor& in, int root) {
  nccl_check_tensor(in, "gather", "input");
  check_root(root, size(), "gather");
  const bool is_root = rank() == root;
  if (is_root) {
    nccl_check_tensor(out, "gather", "output");
    check_pair(out, in, "gather");
    DDL_CHECK(out.dtype() == in.dtype() && out.numel() == size() * in.numel(),
              "gather: the root's output must hold world size (", size(), ") x input, got output ", describe(out),
              " for input ", describe(in));
  }
  std::string desc = "gather(" + describe(in) + ", root=" + std::to_string(root) + ")";
  const std::string fp = "gather(" + detail::debug_signature(in) + ", root=" + std::to_string(root) + ")";
  if (in.numel() == 0) return finished_work(desc, fp);
  const int64_t chunk = static_cast<int64_t>(in.nbytes()), n = size(), me = rank();
  return launch(OpKind::Gather, std::move(desc), fp,
                is_root ? "every other rank" : "the root rank " + std::to_string(root), in.device().index,
                kCollectiveLane, {{in, false}, {is_root ? out : Tensor(), true}}, is_root ? 0 : chunk,
                is_root ? chunk * (n - 1) : 0,
                [root, n, me, is_root](const Lane& l, const std::vector<Tensor>& bufs, const std::string& what) {
                  const Tensor &src = bufs[0], &dst = bufs[1];
                  const int64_t count = src.numel();
                  const ncclDataType_t dt = nccl_type(src.dtype());
                  if (is_root)
                    DDL_NCCL_CUDA(cudaMemcpyAsync(bytes_at(dst, count, me), src.raw_data(), src.nbytes(),
                                                  cudaMemcpyDeviceToDevice, l.stream),
                                  what);
                  NcclGroup group(l.comm, what);
                  for (int r = 0; r < n; ++r) {
                    if (is_root && r != me)
                      DDL_NCCL_CHECK(ncclRecv(bytes_at(dst, count, r), count, dt, r, l.comm, l.stream), l.comm, what);
                  }
                  if (!is_root)
                    DDL_NCCL_CHECK(ncclSend(src.raw_data(), count, dt, root, l.comm, l.stream), l.comm, what);
                  group.end();
                });
}

std::shared_ptr<Work> ProcessGroupNccl::scatter_async(const Tensor& out, const Tensor& in, int root) {
  nccl_check_tensor(out, "scatter", "output");
  check_root(root, size(), "scatter");
  const bool is_root = rank() == root;
  if (is_root) {
    nccl_check_tensor(in, "scatter", "input");
    check_pair(out, in, "scatter");
    DDL_CHECK(in.dtype() == out.dtype() && in.numel() == size() * out.numel(),
              "scatter: the root's input must hold world size (", size(), ") x output, got input ", describe(in),
              " for output ", describe(out));
  }
  std::string desc = "scatter(" + describe(out) + ", root=" + std::to_string(root) + ")";
  const std::string fp = "scatter(" + detail::debug_signature(out) + ", root=" + std::to_string(root) + ")";
  if (out.numel() == 0) return finished_work(desc, fp);
  const int64_t chunk = static_cast<int64_t>(out.nbytes()), n = size(), me = rank();
  return launch(OpKind::Scatter, std::move(desc), fp,
                is_root ? "every other rank" : "the root rank " + std::to_string(root), out.device().index,
                kCollectiveLane, {{is_root ? in : Tensor(), false}, {out, true}}, is_root ? chunk * (n - 1) : 0,
                is_root ? 0 : chunk,
                [root, n, me, is_root](const Lane& l, const std::vector<Tensor>& bufs, const std::string& what) {
                  const Tensor &src = bufs[0], &dst = bufs[1];
                  const int64_t count = dst.numel();
                  const ncclDataType_t dt = nccl_type(dst.dtype());
                  if (is_root)
                    DDL_NCCL_CUDA(cudaMemcpyAsync(dst.raw_data(), bytes_at(src, count, me), dst.nbytes(),
                                                  cudaMemcpyDeviceToDevice, l.stream),
                                  what);
                  NcclGroup group(l.comm, what);
                  for (int r = 0; r < n; ++r) {
                    if (is_root && r != me)
                      DDL_NCCL_CHECK(ncclSend(bytes_at(src, count, r), count, dt, r, l.comm, l.stream), l.comm, what);
                  }
                  if (!is_root)
                    DDL_NCCL_CHECK(ncclRecv(dst.raw_data(), count, dt, root, l.comm, l.stream), l.comm, what);
                  group.end();
                });
}

std::shared_ptr<Work> ProcessGroupNccl::all_to_all_async(const Tensor& out, const Tensor& in) {
  nccl_check_tensor(in, "all_to_all", "input");
  nccl_check_tensor(out, "all_to_all", "output");
  check_pair(out, in, "all_to_all");
  DDL_CHECK(in.dtype() == out.dtype() && in.numel() == out.numel() && in.numel() % size() == 0,
            "all_to_all: input and output must have the same dtype and numel, divisible by the world size ", size(),
            "; got input ", describe(in), ", output ", describe(out));
  std::string desc = "all_to_all(" + describe(in) + ")";
  const std::string fp = "all_to_all(" + detail::debug_signature(in) + ")";
  if (in.numel() == 0) return finished_work(desc, fp);
  const int64_t n = size(), me = rank(), b = static_cast<int64_t>(in.nbytes()) / n * (n - 1);
  return launch(OpKind::AllToAll, std::move(desc), fp, "every other rank", in.device().index, kCollectiveLane,
                {{in, false}, {out, true}}, b, b,
                [n, me](const Lane& l, const std::vector<Tensor>& bufs, const std::string& what) {
                  const Tensor &src = bufs[0], &dst = bufs[1];
                  const int64_t count = src.numel() / n;
                  const ncclDataType_t dt = nccl_type(src.dtype());
                  DDL_NCCL_CUDA(cudaMemcpyAsync(bytes_at(dst, count, me), bytes_at(src, count, me),
                                                count * src.element_size(), cudaMemcpyDeviceToDevice, l.stream),
                                what);
                  NcclGroup group(l.comm, what);
                  for (int r = 0; r < n; ++r) {
                    if (r == me) continue;
                    DDL_NCCL_CHECK(ncclSend(bytes_at(src, count, r), count, dt, r, l.comm, l.stream), l.comm, what);
                    DDL_NCCL_CHECK(ncclRecv(bytes_at(dst, count, r), count, dt, r, l.comm, l.stream), l.comm, what);
                  }
                  group.end();
                });
}

std::shared_ptr<Work> ProcessGroupNccl::barrier_async() {
  // A one-float all-reduce: see Note [NCCL barrier] in process_group_nccl.cpp for what its
  // completion means.
  const int64_t b = ring_allreduce_bytes(sizeof(float), size());
  return launch(OpKind::Barrier, "barrier()", "barrier()", "every other rank", default_device(), kCollectiveLane, {}, b,
                b, [](const Lane& l, const std::vector<Tensor>&, const std::string& what) {
                  DDL_NCCL_CHECK(ncclAllReduce(l.scratch, l.scratch, 1, ncclFloat32, ncclSum, l.comm, l.stream), l.comm,
                                 what);
                });
}

std::shared_ptr<Work> ProcessGroupNccl::send_async(const Tensor& t, int dst, int tag) {
  return p2p(OpKind::Send, t, dst, tag);
}

std::shared_ptr<Work> ProcessGroupNccl::recv_async(const Tensor& t, int src, int tag) {
  return p2p(OpKind::Recv, t, src, tag);
}

std::shared_ptr<Work> ProcessGroupNccl::p2p(OpKind kind, const Tensor& t, int peer, int tag) {
  const bool is_send = kind == OpKind::Send;
  const char* name = is_send ? "send" : "recv";
  nccl_check_tensor(t, name);
  std::string desc = p2p_description(kind, t, peer, tag);
  if (t.numel() == 0) return finished_work(desc, "");  // "": send/recv are not DDL_DEBUG-checked
  const int64_t b = static_cast<int64_t>(t.nbytes());
  // See Note [NCCL point-to-point lanes]: the lane of the message's direction.
  const int from = is_send ? rank() : peer, to = is_send ? peer : rank();
  const int lane = from < to ? kUpLane : kDownLane;
  return launch(
      kind, std::move(desc), "", "peer rank " + std::to_string(peer), t.device().index, lane, {{t, !is_send}},
      is_send ? b : 0, is_send ? 0 : b,
      [peer, is_send](const Lane& l, const std::vector<Tensor>& bufs, const std::string& what) {
        const Tensor& buf = bufs[0];
        if (is_send)
          DDL_NCCL_CHECK(ncclSend(buf.raw_data(), buf.numel(), nccl_type(buf.dtype()), peer, l.comm, l.stream), l.comm,
                         what);
        else
          DDL_NCCL_CHECK(ncclRecv(buf.raw_data(), buf.numel(), nccl_type(buf.dtype()), peer, l.comm, l.stream), l.comm,
                         what);
      });
}

}  // namespace ddl::dist
