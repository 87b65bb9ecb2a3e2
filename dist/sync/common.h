// The pieces strategies share, built-in or a student's own (installed with ddl): which
// tensors take part, flattening tensors into one buffer per dtype, making replicas
// identical, timing communication. With registry.h, all a new strategy needs
// (docs/sync.md, "Writing your own strategy").
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include <ddl/dist/sync/registry.h>
#include <ddl/dist/sync/ring.h>
#include <ddl/dist/sync/strategy.h>

namespace ddl::dist::detail {

// The parameters that train (requires_grad), in registration order.
std::vector<Variable> trainable_parameters(const nn::Module& model);
// Their gradients. A parameter that got none this step gets zeros, on every rank, so
// that all ranks still issue the same communication (a missing gradient must not hang).
std::vector<Tensor> gradients_of(std::vector<Variable>& params);
// Parameters plus floating buffers (BatchNorm running statistics): what model averaging averages.
std::vector<Tensor> floating_state(const nn::Module& model);

// Runs fn on one flat, contiguous copy per dtype of `tensors` (in order of first
// appearance), then copies each flat buffer back into its tensors.
void coalesced(const std::vector<Tensor>& tensors, const std::function<void(const Tensor& flat)>& fn);

// A 1-D tensor cut into consecutive views of at most `elems` elements (kRingSubChunkBytes
// worth when elems <= 0): the unit in which the hand-written strategies pipeline transfers.
std::vector<Tensor> pieces_of(const Tensor& t, int64_t elems = 0);

// Every rank's parameters and buffers ← rank 0's (one broadcast per dtype).
void broadcast_state(const nn::Module& model, ProcessGroup& group);

// Milliseconds fn() took, by steady_clock: what last_comm_ms() reports.
template <typename Fn>
double timed_ms(Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

using ModelPtr = std::shared_ptr<nn::Module>;
using GroupPtr = std::shared_ptr<ProcessGroup>;

}  // namespace ddl::dist::detail

namespace ddl::dist {
// The same helpers by public names, for strategies written outside ddl (docs/sync.md):
// `using namespace ddl::dist;` would make a bare `detail::` ambiguous with ddl::detail.
using detail::broadcast_state;
using detail::coalesced;
using detail::floating_state;
using detail::gradients_of;
using detail::pieces_of;
using detail::timed_ms;
using detail::trainable_parameters;
}  // namespace ddl::dist
