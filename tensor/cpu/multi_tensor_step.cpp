// CPU multi-tensor SGD and Adam steps (tensor/ops/multi_tensor_step.h). The slices are laid
// end to end; the total element count is cut into chunks and each chunk walks the
// slices it overlaps. Every expression repeats one elementwise op of the per-tensor step
// (a + alpha * b, x * scalar, g * g, sqrt, m / denom, NaN-propagating maximum) in the
// same order and in float, with no contraction (-ffp-contract is off in ISO C++ mode), so
// the bits match for any thread count.
#include <algorithm>
#include <cmath>

#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/ops/multi_tensor_step.h>

namespace ddl::detail {
namespace {

// Elements per task: enough to outweigh taking it. Tasks are taken in turn (parallel_for_dynamic):
// the gradients backward wrote last are still in cache, the others come from memory.
constexpr int64_t kChunk = 65536;

// Calls fn(slice, begin, end) for the parts of the slices inside the flat range [b, e).
template <typename Slice, typename Fn>
void for_each_part(const std::vector<Slice>& slices, const Fn& fn) {
  std::vector<int64_t> start(slices.size() + 1, 0);
  for (size_t k = 0; k < slices.size(); ++k) start[k + 1] = start[k] + slices[k].n;
  parallel_for_dynamic(0, start.back(), kChunk, [&](int64_t b, int64_t e) {
    size_t k = static_cast<size_t>(std::upper_bound(start.begin(), start.end(), b) - start.begin()) - 1;
    for (; k < slices.size() && start[k] < e; ++k) {
      const int64_t lo = std::max(b, start[k]) - start[k], hi = std::min(e, start[k + 1]) - start[k];
      if (hi > lo) fn(slices[k], lo, hi);
    }
  });
}

// w, g, buf: [n] float32. Per element: tensor/ops/sgd_update.cpp's sgd_update_composite.
void sgd_part(const SgdSlice& s, int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) {
    float d = s.g[i];
    if (s.has_weight_decay) d = d + s.weight_decay * s.w[i];  // add(d, w, weight_decay)
    if (s.buf) {
      float b = d;  // first step: clone
      if (!s.first) {
        b = s.buf[i] * s.momentum;          // mul_(momentum)
        b = b + s.one_minus_dampening * d;  // add_(d, 1 - dampening)
      }
      s.buf[i] = b;
      d = s.nesterov ? d + s.momentum * b : b;  // add(d, buf, momentum)
    }
    s.w[i] = s.w[i] + s.neg_lr * d;  // add_(d, -lr)
  }
}

// w, g, m, v, vmax: [n] float32. Per element: optim/adam.cpp's Adam::step body.
void adam_part(const AdamSlice& s, int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) {
    float w = s.w[i], g = s.g[i];
    if (s.has_weight_decay) {
      if (s.decoupled)
        w = w * s.decay_scale;  // w.mul_(1 - lr * wd)
      else
        g = g + s.weight_decay * w;  // add(g, w, wd)
    }
    float m = s.m[i] * s.beta1;
    m = m + s.one_minus_beta1 * g;
    const float gg = g * g;
    float v = s.v[i] * s.beta2;
    v = v + s.one_minus_beta2 * gg;
    s.m[i] = m, s.v[i] = v;
    float second = v;
    if (s.vmax) {
      const float a = s.vmax[i];
      second = a > v || a != a ? a : v;  // maximum(vmax, v): NaN propagates
      s.vmax[i] = second;
    }
    float denom = std::sqrt(second) * s.inv_sqrt_bc2;  // div(sqrt(v), sqrt(bc2))
    denom = denom + s.eps;
    s.w[i] = w + s.neg_step * (m / denom);  // add_(div(m, denom), -lr / bc1)
  }
}

}  // namespace

void sgd_step_multi(const std::vector<SgdSlice>& slices) { for_each_part(slices, sgd_part); }

void adam_step_multi(const std::vector<AdamSlice>& slices) { for_each_part(slices, adam_part); }

}  // namespace ddl::detail
