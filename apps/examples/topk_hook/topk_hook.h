// A DDP communication hook written as a user would, against ddl's installed headers: top-k
// sparsification with error feedback (Stich, Cordonnier and Jaggi, "Sparsified SGD with
// Memory", NeurIPS 2018; Lin et al., "Deep Gradient Compression", ICLR 2018). Each rank
// adds what it did not send last time to its bucket, sends only the k largest entries by
// magnitude (index and value, through all_gather: k is the same on every rank), and keeps
// the rest as its new error. Every rank sums the sparse contributions and divides.
#pragma once

#include <algorithm>
#include <map>
#include <memory>

#include <ddl/dist/hooks/comm_hook.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/indexing.h>

namespace user {

// ratio: the share of each bucket sent, in (0, 1].
inline ddl::dist::CommHook topk_hook(double ratio) {
  auto errors = std::make_shared<std::map<size_t, ddl::Tensor>>();  // per bucket: what was not sent
  return [ratio, errors](ddl::dist::GradBucket& b) {
    using namespace ddl;
    const Tensor in = b.buffer;  // flat, undivided
    Tensor& error = (*errors)[b.index];
    if (error.defined()) in.add_(error);
    const int64_t k = std::max<int64_t>(1, static_cast<int64_t>(ratio * in.numel()));
    const Tensor index = in.abs().topk(k).indices;
    const Tensor values = index_select(in, 0, index);
    error = in.clone();
    scatter_(error, 0, index, 0.0);  // the error: everything but what we send
    const int64_t world = b.group->size();
    const Tensor all_index = empty({world * k}, TensorOptions(kInt64));
    const Tensor all_values = empty({world * k}, in.options());
    auto index_work = b.group->all_gather_async(all_index, index);
    auto values_work = b.group->all_gather_async(all_values, values);
    const double divisor = b.divisor;
    return dist::HookFuture(in, values_work).then([=](const Tensor&) {
      index_work->wait();
      in.zero_();
      scatter_add_(in, 0, all_index, all_values);  // rank 0's entries first, then rank 1's, ...
      in.div_(divisor);
      return dist::HookFuture(in);
    });
  };
}

}  // namespace user
