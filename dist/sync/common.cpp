// Shared helpers of the sync strategies: parameter and gradient lists, per-dtype
// flattening, the initial broadcast that makes replicas identical.
#include <algorithm>

#include <ddl/dist/sync/common.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/trace/trace.h>

namespace ddl::dist::detail {

std::vector<Variable> trainable_parameters(const nn::Module& model) {
  std::vector<Variable> out;
  for (auto& p : model.parameters())
    if (p.requires_grad()) out.push_back(p);
  return out;
}

std::vector<Tensor> gradients_of(std::vector<Variable>& params) {
  std::vector<Tensor> grads;
  grads.reserve(params.size());
  for (auto& p : params) {
    if (!p.grad().defined()) p.set_grad(zeros(p.shape(), TensorOptions(p.dtype(), p.device())));
    grads.push_back(p.grad());
  }
  return grads;
}

std::vector<Tensor> floating_state(const nn::Module& model) {
  std::vector<Tensor> out;
  for (auto& p : model.parameters()) out.push_back(p.data());
  for (auto& [name, b] : model.named_buffers())
    if (is_floating(b.dtype())) out.push_back(b.data());
  return out;
}

void coalesced(const std::vector<Tensor>& tensors, const std::function<void(const Tensor& flat)>& fn) {
  std::vector<DType> dtypes;
  for (const Tensor& t : tensors)
    if (std::find(dtypes.begin(), dtypes.end(), t.dtype()) == dtypes.end()) dtypes.push_back(t.dtype());
  for (DType d : dtypes) {
    int64_t numel = 0;
    for (const Tensor& t : tensors)
      if (t.dtype() == d) numel += t.numel();
    const Tensor flat = empty({numel}, TensorOptions(d, tensors.front().device()));
    int64_t off = 0;
    for (const Tensor& t : tensors)
      if (t.dtype() == d) flat.narrow(0, off, t.numel()).view(t.shape()).copy_(t), off += t.numel();
    fn(flat);
    off = 0;
    for (const Tensor& t : tensors)
      if (t.dtype() == d) t.copy_(flat.narrow(0, off, t.numel()).view(t.shape())), off += t.numel();
  }
}

std::vector<Tensor> pieces_of(const Tensor& t, int64_t elems) {
  if (elems <= 0) elems = std::max<int64_t>(1, kRingSubChunkBytes / int64_t(t.element_size()));
  std::vector<Tensor> out;
  for (int64_t off = 0; off < t.numel(); off += elems)
    out.push_back(t.narrow(0, off, std::min(elems, t.numel() - off)));
  return out;
}

void broadcast_state(const nn::Module& model, ProcessGroup& group) {
  if (group.size() == 1) return;
  std::vector<Tensor> state;
  for (auto& [name, v] : model.named_state()) state.push_back(v.data());
  if (state.empty()) return;
  DDL_TRACE_SPAN("broadcast state", "sync");
  coalesced(state, [&](const Tensor& flat) { group.broadcast(flat, 0); });
}

}  // namespace ddl::dist::detail
