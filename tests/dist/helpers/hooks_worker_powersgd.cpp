// hooks_worker's PowerSGD checks: against a reference of the algorithm written out for the
// whole job in one process, and against PyTorch 1.13's own hook (golden values).
#include <random>

#include "tests/dist/helpers/hooks_worker.h"
#include "tests/dist/helpers/powersgd_golden.h"

namespace hooks_test {

namespace {

// PowerSGD's reference, written out for the whole job in one process (float64).
struct PowerSGDReference {
  int64_t rank = 1;
  std::mt19937_64 rng{0};
  std::vector<std::vector<Tensor>> err;  // [rank][tensor in bucket order]
  std::vector<Tensor> q;                 // per compressed tensor
  static void orth(Tensor& a) {
    const int64_t cols = a.shape()[1];
    for (int64_t j = 0; j < cols; ++j) {
      Tensor c = a.narrow(1, j, 1);
      c.div_(std::sqrt((c * c).sum().item()));
      for (int64_t k = j + 1; k < cols; ++k) a.narrow(1, k, 1).sub_(c * (c * a.narrow(1, k, 1)).sum().item());
    }
  }
  // in[r]: rank r's gradients in bucket order; returns the average PowerSGD gives.
  std::vector<Tensor> step(std::vector<std::vector<Tensor>> in) {
    const int w = static_cast<int>(in.size());
    if (err.empty()) err.assign(w, std::vector<Tensor>(in[0].size()));
    const bool fresh = q.empty();
    Generator gen(fresh ? rng() % 1'000'000'000 : 0);
    std::vector<Tensor> out;
    size_t qi = 0;
    for (size_t t = 0; t < in[0].size(); ++t) {
      for (int r = 0; r < w; ++r) {
        in[r][t] = in[r][t].to(kFloat64);
        if (err[r][t].defined()) in[r][t] = in[r][t] + err[r][t];
      }
      const int64_t n = in[0][t].dim() == 0 ? 1 : in[0][t].shape()[0], m = in[0][t].numel() / n;
      const int64_t k = std::min({n, m, rank});
      Tensor avg;
      if (double(n + m) * k * 2 < double(n * m)) {
        if (fresh) q.push_back(randn({m, k}, gen).to(kFloat64));
        Tensor& qt = q[qi++];
        orth(qt);
        Tensor p = zeros({n, k}, TensorOptions(kFloat64));
        for (int r = 0; r < w; ++r) p.add_(in[r][t].reshape({n, m}).matmul(qt));
        orth(p);
        qt = zeros({m, k}, TensorOptions(kFloat64));
        for (int r = 0; r < w; ++r) qt.add_(in[r][t].reshape({n, m}).t().matmul(p));
        qt.div_(w);
        avg = p.matmul(qt.t()).reshape(in[0][t].shape());
      } else {
        avg = zeros(in[0][t].shape(), TensorOptions(kFloat64));
        for (int r = 0; r < w; ++r) avg.add_(in[r][t]);
        avg.div_(w);
      }
      for (int r = 0; r < w; ++r) err[r][t] = in[r][t] - avg;
      out.push_back(avg);
    }
    return out;
  }
};

}  // namespace

// PowerSGD over 5 steps: step 0 plain (start_powerSGD_iter = 1), step 1 with fresh Qs, later
// steps warm-started. Every step's gradients, this rank's error and the Qs match the reference.
void check_powersgd(int64_t rank) {
  auto model = make_mlp();
  DistributedDataParallel ddp(model, pg);  // one bucket: the last parameter first
  EXPECT(ddp.stats().bucket_bytes.size() == 1, "expected one bucket");
  auto state = std::make_shared<hooks::PowerSGDState>(
      hooks::PowerSGDOptions{.matrix_approximation_rank = rank, .start_powerSGD_iter = 1});
  ddp.register_comm_hook(hooks::powersgd_hook(state));
  PowerSGDReference ref;
  ref.rank = rank;
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  for (int64_t s = 0; s < 5; ++s) {
    auto local = local_grads(*model, s);
    for (auto& g : local) std::reverse(g.begin(), g.end());  // bucket order
    std::vector<Tensor> want;
    if (s == 0) {
      for (size_t t = 0; t < local[0].size(); ++t) {
        want.push_back(zeros(local[0][t].shape(), TensorOptions(kFloat64)));
        for (auto& g : local) want.back().add_(g[t].to(kFloat64));
        want.back().div_(pg->size());
      }
    } else {
      want = ref.step(local);
    }
    opt.zero_grad();
    loss_of(ddp, pg->rank(), s).backward();
    auto got = grads(*model);
    std::reverse(got.begin(), got.end());
    for (size_t t = 0; t < got.size(); ++t) {
      const double scale = want[t].abs().max().item() + 1e-6;
      EXPECT(max_abs_diff(got[t], want[t]) < 1e-4 * scale, "step ", s, " tensor ", t, ": PowerSGD differs by ",
             max_abs_diff(got[t], want[t]), " (scale ", scale, ")");
    }
    EXPECT(state->iter == s + 1, "state.iter ", state->iter, " after ", s + 1, " steps");
    if (s > 0) {  // error feedback: this rank's error is its input minus the average
      int64_t at = 0;
      for (size_t t = 0; t < got.size(); ++t) {
        const Tensor e = state->error_dict.at(0).narrow(0, at, got[t].numel()).view(got[t].shape());
        EXPECT(max_abs_diff(e, ref.err[pg->rank()][t]) < 1e-4 * (ref.err[pg->rank()][t].abs().max().item() + 1e-6),
               "step ", s, " tensor ", t, ": error feedback differs");
        at += got[t].numel();
      }
      int64_t qat = 0;  // warm start: the Qs kept are the reference's
      for (const Tensor& q : ref.q) {
        const Tensor mine = state->q_memory_dict.at(0).narrow(0, qat, q.numel()).view(q.shape());
        EXPECT(max_abs_diff(mine, q) < 1e-4 * (q.abs().max().item() + 1e-6), "step ", s, ": kept Q differs");
        qat += q.numel();
      }
      EXPECT(qat == state->q_memory_dict.at(0).numel(), "Q memory holds ", state->q_memory_dict.at(0).numel());
    }
    opt.step();
  }
}

// powersgd_hook called directly on a GradBucket against PyTorch 1.13's powerSGD_hook
// (tests/golden/powersgd_hook.py, one process): five steps, PowerSGD from step 2 at rank 2,
// from the Qs PyTorch drew (given as a warm start: both orthogonalise them first).
void check_powersgd_torch() {
  namespace g = powersgd_golden;
  const std::vector<Shape> shapes{{16, 12}, {16}, {8, 16}, {8}, {4, 2, 3, 3}};
  auto state = std::make_shared<hooks::PowerSGDState>(
      hooks::PowerSGDOptions{.matrix_approximation_rank = g::kRank, .start_powerSGD_iter = g::kStart});
  const CommHook hook = hooks::powersgd_hook(state);
  const int64_t n = static_cast<int64_t>(g::outputs[0].size());
  for (int step = 0; step < g::kSteps; ++step) {
    std::vector<float> values(n);
    for (int64_t i = 0; i < n; ++i) values[i] = float(std::sin(0.37 * double(i) + 1.3 * step) * (1 + 0.01 * double(i)));
    GradBucket b;
    b.is_last = true;
    b.buffer = from_vector(values);
    int64_t at = 0;
    for (const Shape& s : shapes) {
      b.gradients.push_back(b.buffer.narrow(0, at, s.numel()).view(s));
      at += s.numel();
    }
    b.divisor = pg->size();
    b.group = pg.get();
    if (step == g::kStart) {
      state->q_memory_dict[0] = from_vector(g::raw_q);
      state->p_memory_dict[0] = zeros({(16 + 8) * g::kRank});
    }
    const Tensor out = hook(b).wait(), want = from_vector(g::outputs[step]);
    EXPECT(max_abs_diff(out, want) < 1e-4 * (want.abs().max().item() + 1e-6), "step ", step,
           ": powersgd_hook differs from PyTorch's by ", max_abs_diff(out, want));
  }
  const Tensor e = from_vector(g::error), q = from_vector(g::q_memory);
  EXPECT(max_abs_diff(state->error_dict.at(0), e) < 1e-4 * e.abs().max().item(),
         "error feedback differs from PyTorch's");
  EXPECT(max_abs_diff(state->q_memory_dict.at(0), q) < 1e-4 * q.abs().max().item(), "kept Q differs from PyTorch's");
}

}  // namespace hooks_test
