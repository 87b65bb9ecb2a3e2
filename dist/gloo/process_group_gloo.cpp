// ProcessGroupGloo's public calls: argument checks, staging of non-contiguous tensors,
// and the Task each collective enqueues (see process_group_gloo.h). The worker thread,
// error handling and DDL_DEBUG checks live in gloo_worker.cpp.
#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <ddl/base/error.h>
#include <ddl/dist/debug_check.h>
#include <ddl/dist/flight/recorder.h>
#include <ddl/dist/gloo/gloo_collectives.h>
#include <ddl/dist/gloo/process_group_gloo.h>
#include <ddl/dist/transport/shm_all_reduce.h>

namespace ddl::dist {
namespace {

using detail::GlooCall;
using detail::Traffic;

bool supported(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Int64 || t == DType::Int32 || t == DType::UInt8 ||
         t == DType::Int8;
}

// all_reduce also sums float16 and bfloat16 (the compression hooks of dist/hooks/ need it).
void check_tensor(const Tensor& t, const char* op, const char* what = "tensor", bool sixteen_bit = false) {
  DDL_CHECK(t.defined(), op, ": the ", what, " is undefined");
  DDL_CHECK(t.device().is_cpu(), op, ": the gloo backend works on CPU tensors, got ", describe(t),
            " (use the nccl backend for CUDA tensors)");
  DDL_CHECK(supported(t.dtype()) || (sixteen_bit && is_reduced_float(t.dtype())), op, ": dtype ", t.dtype(),
            " is not supported (float32, float64, int64, int32, uint8, int8",
            sixteen_bit ? ", float16, bfloat16)" : ")");
}

void check_reduce_op(const Tensor& t, ReduceOp op, const char* name) {
  DDL_CHECK(op != ReduceOp::Avg || (is_floating(t.dtype()) && !is_reduced_float(t.dtype())), name,
            ": ReduceOp::Avg needs a float32 or float64 tensor, got ", describe(t), " (use Sum and divide)");
}

std::string sig(const Tensor& t) { return detail::debug_signature(t); }

// Runs fn on contiguous buffers, copying results back into non-contiguous outputs.
Tensor staged(const Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }
void unstage(const Tensor& target, const Tensor& buf) {
  if (!target.is_contiguous()) target.copy_(buf);
}

std::string ring_peers(int rank, int n) {
  if (n == 2) return "its ring neighbour rank " + std::to_string(1 - rank);
  return "its ring neighbours rank " + std::to_string((rank + n - 1) % n) + " and rank " +
         std::to_string((rank + 1) % n);
}

}  // namespace

std::shared_ptr<Work> ProcessGroupGloo::all_reduce_async(const Tensor& t, ReduceOp op) {
  check_tensor(t, "all_reduce", "tensor", true);
  check_reduce_op(t, op, "all_reduce");
  std::string desc = "all_reduce(" + describe(t) + ", " + reduce_op_name(op) + ")";
  std::string fp = "all_reduce(" + sig(t) + ", " + reduce_op_name(op) + ")";
  const int n = size();
  // Through shared memory even when empty: there every call checks that all ranks agree.
  return enqueue(
      OpKind::AllReduce, desc, fp, shm_ ? "every other rank" : ring_peers(rank(), n), [t, op, n](const GlooCall& c) {
        if (n == 1 || (t.numel() == 0 && !c.shm)) return Traffic{};
        Tensor buf = staged(t);
        Traffic tr = c.shm ? c.shm->all_reduce(buf, op, c.tag, c.timeout) : detail::gloo_all_reduce(c, buf, op);
        unstage(t, buf);
        return tr;
      });
}

std::shared_ptr<Work> ProcessGroupGloo::broadcast_async(const Tensor& t, int root) {
  check_tensor(t, "broadcast");
  DDL_CHECK(root >= 0 && root < size(), "broadcast: root ", root, " outside [0, ", size(), ")");
  std::string desc = "broadcast(" + describe(t) + ", root=" + std::to_string(root) + ")";
  std::string fp = "broadcast(" + sig(t) + ", root=" + std::to_string(root) + ")";
  const int n = size();
  return enqueue(OpKind::Broadcast, desc, fp, "its broadcast tree rooted at rank " + std::to_string(root),
                 [t, root, n](const GlooCall& c) {
                   if (n == 1 || t.numel() == 0) return Traffic{};
                   Tensor buf = staged(t);
                   Traffic tr = detail::gloo_broadcast(c, buf, root);
                   unstage(t, buf);
                   return tr;
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::reduce_async(const Tensor& t, int root, ReduceOp op) {
  check_tensor(t, "reduce");
  check_reduce_op(t, op, "reduce");
  DDL_CHECK(root >= 0 && root < size(), "reduce: root ", root, " outside [0, ", size(), ")");
  std::string args = ", root=" + std::to_string(root) + ", " + reduce_op_name(op) + ")";
  const int n = size(), me = rank();
  return enqueue(OpKind::Reduce, "reduce(" + describe(t) + args, "reduce(" + sig(t) + args,
                 ring_peers(me, n) + " and the root rank " + std::to_string(root), [t, root, op, n](const GlooCall& c) {
                   if (n == 1 || t.numel() == 0) return Traffic{};
                   Tensor buf = staged(t);
                   Traffic tr = detail::gloo_reduce(c, buf, root, op);
                   unstage(t, buf);
                   return tr;
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::all_gather_async(const Tensor& out, const Tensor& in) {
  check_tensor(in, "all_gather", "input");
  check_tensor(out, "all_gather", "output");
  DDL_CHECK(out.dtype() == in.dtype() && out.numel() == size() * in.numel(),
            "all_gather: output must hold world size (", size(), ") x input, got output ", describe(out), " for input ",
            describe(in));
  const int n = size();
  return enqueue(OpKind::AllGather, "all_gather(" + describe(in) + ")", "all_gather(" + sig(in) + ")",
                 ring_peers(rank(), n), [out, in, n](const GlooCall& c) {
                   Tensor src = staged(in), dst = staged(out);
                   Traffic tr;
                   if (n == 1 || in.numel() == 0)
                     dst.view(in.shape()).copy_(src);
                   else
                     tr = detail::gloo_all_gather(c, dst, src);
                   unstage(out, dst);
                   return tr;
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::reduce_scatter_async(const Tensor& out, const Tensor& in, ReduceOp op) {
  check_tensor(in, "reduce_scatter", "input");
  check_tensor(out, "reduce_scatter", "output");
  check_reduce_op(in, op, "reduce_scatter");
  DDL_CHECK(out.dtype() == in.dtype() && in.numel() == size() * out.numel(),
            "reduce_scatter: input must hold world size (", size(), ") x output, got input ", describe(in),
            " for output ", describe(out));
  const int n = size();
  std::string args = std::string(", ") + reduce_op_name(op) + ")";
  return enqueue(OpKind::ReduceScatter, "reduce_scatter(" + describe(in) + args, "reduce_scatter(" + sig(in) + args,
                 ring_peers(rank(), n), [out, in, op, n](const GlooCall& c) {
                   Tensor src = staged(in), dst = staged(out);
                   Traffic tr;
                   if (n == 1 || out.numel() == 0)
                     dst.copy_(src.view(out.shape()));
                   else
                     tr = detail::gloo_reduce_scatter(c, dst, src, op);
                   unstage(out, dst);
                   return tr;
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::gather_async(const Tensor& out, const Tensor& in, int root) {
  check_tensor(in, "gather", "input");
  DDL_CHECK(root >= 0 && root < size(), "gather: root ", root, " outside [0, ", size(), ")");
  const bool is_root = rank() == root;
  if (is_root) {
    check_tensor(out, "gather", "output");
    DDL_CHECK(out.dtype() == in.dtype() && out.numel() == size() * in.numel(),
              "gather: the root's output must hold world size (", size(), ") x input, got output ", describe(out),
              " for input ", describe(in));
  }
  const int n = size();
  std::string args = ", root=" + std::to_string(root) + ")";
  return enqueue(OpKind::Gather, "gather(" + describe(in) + args, "gather(" + sig(in) + args,
                 is_root ? "every other rank" : "the root rank " + std::to_string(root),
                 [out, in, root, n, is_root](const GlooCall& c) {
                   Tensor src = staged(in), dst = is_root ? staged(out) : Tensor();
                   Traffic tr;
                   if (n == 1 || in.numel() == 0) {
                     if (is_root && in.numel() > 0) dst.view(in.shape()).copy_(src);
                   } else {
                     tr = detail::gloo_gather(c, dst, src, root);
                   }
                   if (is_root) unstage(out, dst);
                   return tr;
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::scatter_async(const Tensor& out, const Tensor& in, int root) {
  check_tensor(out, "scatter", "output");
  DDL_CHECK(root >= 0 && root < size(), "scatter: root ", root, " outside [0, ", size(), ")");
  const bool is_root = rank() == root;
  if (is_root) {
    check_tensor(in, "scatter", "input");
    DDL_CHECK(in.dtype() == out.dtype() && in.numel() == size() * out.numel(),
              "scatter: the root's input must hold world size (", size(), ") x output, got input ", describe(in),
              " for output ", describe(out));
  }
  const int n = size();
  std::string args = ", root=" + std::to_string(root) + ")";
  return enqueue(OpKind::Scatter, "scatter(" + describe(out) + args, "scatter(" + sig(out) + args,
                 is_root ? "every other rank" : "the root rank " + std::to_string(root),
                 [out, in, root, n, is_root](const GlooCall& c) {
                   Tensor dst = staged(out), src = is_root ? staged(in) : Tensor();
                   Traffic tr;
                   if (n == 1 || out.numel() == 0) {
                     if (out.numel() > 0) dst.copy_(src.view(out.shape()));
                   } else {
                     tr = detail::gloo_scatter(c, dst, src, root);
                   }
                   unstage(out, dst);
                   return tr;
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::all_to_all_async(const Tensor& out, const Tensor& in) {
  check_tensor(in, "all_to_all", "input");
  check_tensor(out, "all_to_all", "output");
  DDL_CHECK(in.dtype() == out.dtype() && in.numel() == out.numel() && in.numel() % size() == 0,
            "all_to_all: input and output must have the same dtype and numel, divisible by the "
            "world size ",
            size(), "; got input ", describe(in), ", output ", describe(out));
  const int n = size();
  return enqueue(OpKind::AllToAll, "all_to_all(" + describe(in) + ")", "all_to_all(" + sig(in) + ")",
                 "every other rank", [out, in, n](const GlooCall& c) {
                   Tensor src = staged(in), dst = staged(out);
                   Traffic tr;
                   if (n == 1 || in.numel() == 0)
                     dst.copy_(src.view(out.shape()));
                   else
                     tr = detail::gloo_all_to_all(c, dst, src);
                   unstage(out, dst);
                   return tr;
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::barrier_async() {
  const int n = size();
  return enqueue(OpKind::Barrier, "barrier()", "barrier()", "every other rank",
                 [n](const GlooCall& c) { return n == 1 ? Traffic{} : detail::gloo_barrier(c); });
}

std::shared_ptr<Work> ProcessGroupGloo::send_async(const Tensor& t, int dst, int tag) {
  return post_p2p(OpKind::Send, t, dst, tag);
}

std::shared_ptr<Work> ProcessGroupGloo::recv_async(const Tensor& t, int src, int tag) {
  return post_p2p(OpKind::Recv, t, src, tag);
}

std::shared_ptr<Work> ProcessGroupGloo::post_p2p(OpKind kind, const Tensor& t, int peer, int tag) {
  const bool is_send = kind == OpKind::Send;
  const char* name = is_send ? "send" : "recv";
  check_tensor(t, name);
  std::string desc = p2p_description(kind, t, peer, tag);
  check_usable(desc);
  P2P p;
  p.kind = kind;
  p.desc = desc;
  p.target = t;
  p.staged = t.is_contiguous() ? t : t.contiguous();
  p.peer = peer;
  p.work = std::make_shared<Work>(desc);
  auto work = p.work;
  if (t.numel() == 0) {
    work->finish();
    return work;
  }
  p.flight_id = flight_->start(kind, desc, static_cast<int64_t>(p.staged.nbytes()), peer);
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    p.id = next_p2p_id_++;
    p2p_pending_[p.id] = desc;
  }
  // Posted here, on the caller's thread, so a send and its matching recv never wait on the
  // collective queue; the p2p thread only waits for completion.
  p.buffer = ctx_->createUnboundBuffer(p.staged.raw_data(), p.staged.nbytes());
  const uint64_t slot = gloo::Slot::build(0x21, static_cast<uint32_t>(tag));
  try {
    if (is_send)
      p.buffer->send(peer, slot);
    else
      p.buffer->recv(peer, slot);
  } catch (const std::exception& e) {
    {
      std::lock_guard<std::mutex> lock(state_mu_);
      p2p_pending_.erase(p.id);
    }
    DDL_CHECK(false, log_prefix(), " ", desc, " failed: ", mark_broken(e.what()));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    p2p_queue_.push_back(std::move(p));
  }
  cv_.notify_all();
  return work;
}

}  // namespace ddl::dist
