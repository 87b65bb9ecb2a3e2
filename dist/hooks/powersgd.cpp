// powerSGD_hook: the three all-reduces (uncompressed tensors, P, Q) and the state between
// steps. The steps match PyTorch's torch/distributed/algorithms/ddp_comm_hooks/powerSGD_hook.py.
#include <cmath>

#include <ddl/dist/hooks/powersgd.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/random.h>
#include <ddl/tensor/ops/join.h>

namespace ddl::dist::hooks {

void orthogonalize(const Tensor& matrix, double epsilon) {
  DDL_CHECK(matrix.dim() == 2 && matrix.is_contiguous(), "powersgd orthogonalize: expected a contiguous matrix, got ",
            matrix.shape());
  if (!matrix.device().is_cpu()) {  // small (n x r): on the host, then back
    const Tensor host = matrix.to(Device::cpu());
    orthogonalize(host, epsilon);
    matrix.copy_(host);
    return;
  }
  const int64_t rows = matrix.shape()[0], cols = matrix.shape()[1];
  DDL_DISPATCH_FLOAT(matrix.dtype(), "powersgd orthogonalize", [&] {
    scalar_t* a = matrix.data<scalar_t>();  // a[i * cols + j]
    for (int64_t j = 0; j < cols; ++j) {
      double norm = 0;
      for (int64_t i = 0; i < rows; ++i) norm += double(a[i * cols + j]) * a[i * cols + j];
      // A zero column with epsilon 0 stays zero (PyTorch fills it with zeros and logs an error).
      const double scale = std::sqrt(norm) + epsilon;
      for (int64_t i = 0; i < rows; ++i) a[i * cols + j] = scale > 0 ? scalar_t(a[i * cols + j] / scale) : scalar_t(0);
      for (int64_t k = j + 1; k < cols; ++k) {  // remove column j from the later columns
        double dot = 0;
        for (int64_t i = 0; i < rows; ++i) dot += double(a[i * cols + j]) * a[i * cols + k];
        for (int64_t i = 0; i < rows; ++i) a[i * cols + k] = scalar_t(a[i * cols + k] - dot * a[i * cols + j]);
      }
    }
  });
}

namespace {

struct Factor {
  Tensor matrix;  // n x m view of the gradient in the bucket
  Tensor p, q;    // n x r and m x r views of the P and Q memories
};

void maybe_increase_iter(PowerSGDState& st, const GradBucket& b) {
  if (b.is_last) ++st.iter;
}

HookFuture allreduce_averaged(GradBucket& b) { return allreduce_hook()(b); }

HookFuture powersgd(const std::shared_ptr<PowerSGDState>& state, GradBucket& b) {
  PowerSGDState& st = *state;
  if (st.iter < st.opts.start_powerSGD_iter) {
    maybe_increase_iter(st, b);
    return allreduce_averaged(b);
  }
  DDL_CHECK(b.buffer.dtype() == kFloat32 || b.buffer.dtype() == kFloat64,
            "powersgd_hook: expected a float32 or float64 bucket, got ", b.buffer.dtype());
  const size_t k = b.index;
  const Tensor input = b.buffer;
  Tensor input_copy;
  if (st.opts.use_error_feedback) {
    auto it = st.error_dict.find(k);
    if (it != st.error_dict.end())
      input.add_(it->second);
    else
      st.error_dict[k] = zeros_like(input);
    input_copy = input.clone();
  }

  // Which tensors to compress: those where (n + m)·r · min_compression_rate < n·m.
  std::vector<Factor> factors;
  std::vector<Tensor> uncompressed;
  int64_t p_size = 0, q_size = 0;
  std::vector<int64_t> ranks;
  for (const Tensor& g : b.gradients) {
    const int64_t n = g.dim() == 0 ? 1 : g.shape()[0], m = n == 0 ? 0 : g.numel() / n;
    const int64_t r = std::min({n, m, st.opts.matrix_approximation_rank});
    const bool compress = double(n + m) * r * st.opts.min_compression_rate < double(n * m);
    st.total_numel_before_compression += n * m;
    st.total_numel_after_compression += compress ? (n + m) * r : n * m;
    if (!compress) {
      uncompressed.push_back(g);
      continue;
    }
    factors.push_back({g.view({n, m}), Tensor(), Tensor()});
    ranks.push_back(r);
    p_size += n * r;
    q_size += m * r;
  }
  std::vector<Tensor> flats;
  for (const Tensor& t : uncompressed) flats.push_back(t.view({t.numel()}));
  const Tensor uncompressed_memory = flats.empty() ? empty({0}, input.options()) : cat(flats);

  const bool fresh = !st.opts.warm_start || !st.p_memory_dict.count(k);
  if (fresh) {
    st.p_memory_dict[k] = empty({p_size}, input.options());
    st.q_memory_dict[k] = empty({q_size}, input.options());
  }
  const Tensor p_memory = st.p_memory_dict[k], q_memory = st.q_memory_dict[k];
  int64_t p_at = 0, q_at = 0;
  for (size_t i = 0; i < factors.size(); ++i) {
    Factor& f = factors[i];
    const int64_t n = f.matrix.shape()[0], m = f.matrix.shape()[1], r = ranks[i];
    f.p = p_memory.narrow(0, p_at, n * r).view({n, r});
    f.q = q_memory.narrow(0, q_at, m * r).view({m, r});
    p_at += n * r;
    q_at += m * r;
  }
  if (!fresh) {
    for (Factor& f : factors) orthogonalize(f.q, st.opts.orthogonalization_epsilon);  // warm start
  } else {
    Generator gen(st.rng() % 1'000'000'000);
    for (Factor& f : factors) {
      f.q.copy_(randn(f.q.shape(), gen, TensorOptions(input.dtype())));  // drawn on the host, as PyTorch
      orthogonalize(f.q, st.opts.orthogonalization_epsilon);
    }
  }
  for (Factor& f : factors) f.p.copy_(f.matrix.matmul(f.q));  // P = M Q

  // PyTorch issues P's all-reduce once the first has completed; issuing both now keeps the
  // same order on every rank and lets them overlap.
  ProcessGroup& pg = *b.group;
  auto uncompressed_work = pg.all_reduce_async(uncompressed_memory, ReduceOp::Sum);
  auto p_work = pg.all_reduce_async(p_memory, ReduceOp::Sum);
  const double divisor = b.divisor;
  auto compute_qs = [=, &pg](const Tensor&) {
    uncompressed_memory.div_(divisor);
    int64_t at = 0;
    for (const Tensor& t : uncompressed) {
      t.copy_(uncompressed_memory.narrow(0, at, t.numel()).view(t.shape()));
      at += t.numel();
    }
    p_work->wait();
    for (const Factor& f : factors) {
      orthogonalize(f.p, state->opts.orthogonalization_epsilon);
      f.q.copy_(f.matrix.t().matmul(f.p));  // Q = M^T P
    }
    return HookFuture(input, pg.all_reduce_async(q_memory, ReduceOp::Sum));
  };
  auto decompress = [=, is_last = b.is_last](const Tensor&) {
    q_memory.div_(divisor);
    for (const Factor& f : factors) f.matrix.copy_(f.p.matmul(f.q.t()));  // M ≈ P Q^T
    PowerSGDState& s = *state;
    if (s.opts.use_error_feedback) s.error_dict[k] = input_copy.sub_(input);
    if (!s.opts.warm_start) {
      s.p_memory_dict.clear();
      s.q_memory_dict.clear();
    }
    if (is_last) ++s.iter;
    return HookFuture(input);
  };
  return HookFuture(input, uncompressed_work).then(compute_qs).then(decompress);
}

}  // namespace

CommHook powersgd_hook(std::shared_ptr<PowerSGDState> state) {
  DDL_CHECK(state != nullptr && state->opts.matrix_approximation_rank >= 1,
            "powersgd_hook: expected a state with matrix_approximation_rank >= 1");
  return [state](GradBucket& b) { return powersgd(state, b); };
}

}  // namespace ddl::dist::hooks
