// ddlrun test helper for DDP's communication hooks and Join (tests/dist/test_comm_hooks.sh):
// `hooks_worker SCENARIO` joins the job, trains a small MLP on data every rank can rebuild,
// and checks DDP's gradients or weights against a reference computed here from every rank's
// local gradients. Prints "SCENARIO ok" and exits 0, or prints what differed and exits 1.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>

#include "apps/examples/topk_hook/topk_hook.h"
#include "tests/dist/helpers/powersgd_golden.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>

using namespace ddl;
using namespace ddl::dist;

namespace {

#define EXPECT(cond, ...) \
  if (!(cond)) DDL_CHECK(false, "rank ", pg->rank(), ": ", __VA_ARGS__)

std::shared_ptr<ProcessGroup> pg;
constexpr int64_t kBatch = 4, kIn = 12, kClasses = 3;

// With BatchNorm (Join's test): training forward uses each rank's own batch statistics, so
// the weights' reference is unchanged, and DDP's buffer broadcasts run under Join.
bool with_batchnorm = false;
std::shared_ptr<nn::Sequential> make_mlp() {
  manual_seed(3);
  std::vector<std::shared_ptr<nn::Module>> layers{std::make_shared<nn::Linear>(kIn, 16)};
  if (with_batchnorm) layers.push_back(std::make_shared<nn::BatchNorm1d>(16));
  layers.push_back(std::make_shared<nn::ReLU>());
  layers.push_back(std::make_shared<nn::Linear>(16, kClasses));
  return std::make_shared<nn::Sequential>(layers);
}

// Batch `step` of rank `rank`: the same tensors in every process.
std::pair<Tensor, Tensor> batch(int rank, int64_t step) {
  Generator g(1000 * step + rank);
  return {randn({kBatch, kIn}, g), randint(0, kClasses, {kBatch}, g)};
}

Variable loss_of(nn::Module& m, int rank, int64_t step) {
  auto [x, y] = batch(rank, step);
  return cross_entropy(m.forward(Variable(x)), y);
}

std::vector<Tensor> grads(nn::Module& m) {
  std::vector<Tensor> out;
  for (auto& p : m.parameters()) out.push_back(p.grad().clone());
  return out;
}

// Each rank's local gradients at `model`'s current weights (computed by every process).
std::vector<std::vector<Tensor>> local_grads(nn::Module& model, int64_t step) {
  std::vector<std::vector<Tensor>> out;
  for (int r = 0; r < pg->size(); ++r) {
    auto copy = make_mlp();
    for (size_t i = 0; i < copy->parameters().size(); ++i)
      copy->parameters()[i].data().copy_(model.parameters()[i].data());
    loss_of(*copy, r, step).backward();
    out.push_back(grads(*copy));
  }
  return out;
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.contiguous().raw_data(), b.contiguous().raw_data(), a.nbytes()) == 0;
}

double max_abs_diff(const Tensor& a, const Tensor& b) { return (a.to(kFloat64) - b.to(kFloat64)).abs().max().item(); }

int64_t all_reduce_bytes() { return pg->stats()[OpKind::AllReduce].bytes_sent; }

// Default hook: DDP without a hook, with allreduce_hook registered, and the arithmetic DDP
// did before hooks (each gradient times 1/W, summed per parameter) agree bit for bit over
// three SGD steps (sums of two floats commute, so the bucket layout cannot matter).
void check_default() {
  auto run = [&](int mode) {
    auto model = make_mlp();
    DistributedDataParallel ddp(model, pg, {.bucket_cap_mb = 0.0005, .first_bucket_mb = 0.0002});
    if (mode == 1) ddp.register_comm_hook(hooks::allreduce_hook());
    optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    for (int64_t s = 0; s < 3; ++s) {
      opt.zero_grad();
      if (mode == 2) {
        loss_of(*model, pg->rank(), s).backward();
        for (auto& p : model->parameters()) {
          p.grad().mul_(1.0 / pg->size());
          pg->all_reduce(p.grad());
        }
      } else {
        loss_of(ddp, pg->rank(), s).backward();
      }
      opt.step();
    }
    return model->parameters();
  };
  const auto plain = run(0), hooked = run(1), manual = run(2);
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT(bitwise_equal(plain[i].data(), hooked[i].data()), "parameter ", i, ": allreduce_hook differs from DDP");
    EXPECT(bitwise_equal(plain[i].data(), manual[i].data()), "parameter ", i, ": DDP differs from g/W summed");
  }
}

// fp16/bf16: each element within u·(Σ_r |g_r|/W)·2 + 3·(smallest subnormal) of the exact
// average (u = 2^-11 for float16, 2^-8 for bfloat16: three roundings, g_r/W, the sum, none
// on the copy back), and half the all-reduce bytes of plain DDP in one step.
void check_compressed(bool bf16) {
  const double u = bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  const double tiny = bf16 ? 0 : 3 * std::ldexp(1.0, -24);
  auto step_bytes = [&](bool compress, std::vector<Tensor>* out) {
    auto model = make_mlp();
    DistributedDataParallel ddp(model, pg);
    if (compress) ddp.register_comm_hook(bf16 ? hooks::bf16_compress_hook() : hooks::fp16_compress_hook());
    const auto ref = local_grads(*model, 0);
    const int64_t before = all_reduce_bytes();
    loss_of(ddp, pg->rank(), 0).backward();
    const int64_t bytes = all_reduce_bytes() - before;
    const auto got = grads(*model);
    for (size_t i = 0; i < got.size(); ++i) {
      Tensor sum = zeros(got[i].shape(), TensorOptions(kFloat64)), abs_sum = sum.clone();
      for (auto& g : ref) sum.add_(g[i].to(kFloat64)), abs_sum.add_(g[i].to(kFloat64).abs());
      const Tensor bound = abs_sum.mul_(2 * u / pg->size()).add_(tiny);
      const Tensor err = (got[i].to(kFloat64) - sum.div_(pg->size())).abs();
      EXPECT(all(err.le(bound)).item() != 0, "parameter ", i, ": compressed average off by ", err.max().item());
    }
    if (out) *out = got;
    return bytes;
  };
  const int64_t plain = step_bytes(false, nullptr), compressed = step_bytes(true, nullptr);
  EXPECT(plain > 0 && std::abs(2.0 * compressed / plain - 1) < 0.01, "all-reduce bytes ", compressed, " vs ", plain,
         ": expected half");
  std::printf("bytes per step: plain %lld, %s %lld\n", (long long)plain, bf16 ? "bf16" : "fp16", (long long)compressed);
}

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

// The user's top-k hook (apps/examples/topk_hook/topk_hook.h) against its definition: each
// rank sends the k largest |g + e| of a bucket, the average of the sparse sums comes back,
// and e keeps what was not sent.
void check_topk() {
  const double ratio = 0.25;
  auto model = make_mlp();
  DistributedDataParallel ddp(model, pg);
  ddp.register_comm_hook(user::topk_hook(ratio));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  std::vector<Tensor> err(pg->size());
  for (int64_t s = 0; s < 3; ++s) {
    auto local = local_grads(*model, s);
    Tensor want;
    for (int r = 0; r < pg->size(); ++r) {
      std::reverse(local[r].begin(), local[r].end());  // the bucket: last parameter first
      std::vector<Tensor> flat;
      for (auto& g : local[r]) flat.push_back(g.reshape({g.numel()}));
      Tensor in = cat(flat);
      if (err[r].defined()) in.add_(err[r]);
      const int64_t k = std::max<int64_t>(1, int64_t(ratio * in.numel()));
      const Tensor idx = in.abs().topk(k).indices;
      Tensor sent = zeros_like(in);
      scatter_(sent, 0, idx, index_select(in, 0, idx));
      err[r] = in - sent;
      want = want.defined() ? want + sent : sent;
    }
    want.div_(pg->size());
    opt.zero_grad();
    loss_of(ddp, pg->rank(), s).backward();
    auto got = grads(*model);
    std::reverse(got.begin(), got.end());
    std::vector<Tensor> flat;
    for (auto& g : got) flat.push_back(g.reshape({g.numel()}));
    EXPECT(max_abs_diff(cat(flat), want) < 1e-6, "step ", s, ": top-k average differs by ",
           max_abs_diff(cat(flat), want));
    opt.step();
  }
}

// Join: rank r holds kBatches[r] batches. The reference, in one process: step s averages the
// gradients of the ranks with more than s batches, divided by W (divide_by_initial_world_size)
// or by how many ranks still had data. All ranks end with the reference's weights.
void check_join(bool by_initial) {
  const std::vector<int64_t> batches{3, 5, 8};
  EXPECT(pg->size() == 3, "join needs 3 ranks");
  with_batchnorm = true;
  auto ref = make_mlp();
  optim::SGD ref_opt(ref->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  for (int64_t s = 0; s < 8; ++s) {
    const auto local = local_grads(*ref, s);
    int active = 0;
    for (int r = 0; r < 3; ++r) active += batches[r] > s;
    ref_opt.zero_grad();
    for (size_t i = 0; i < ref->parameters().size(); ++i) {
      Tensor g = zeros_like(local[0][i]);
      for (int r = 0; r < 3; ++r)
        if (batches[r] > s) g.add_(local[r][i]);
      ref->parameters()[i].set_grad(g.div_(by_initial ? 3.0 : double(active)));
    }
    ref_opt.step();
  }
  auto model = make_mlp();
  DistributedDataParallel ddp(model, pg, {.bucket_cap_mb = 0.0005, .first_bucket_mb = 0.0002});
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  {
    Join join({&ddp}, {.divide_by_initial_world_size = by_initial});
    for (int64_t s = 0; s < batches[pg->rank()]; ++s) {
      opt.zero_grad();
      loss_of(ddp, pg->rank(), s).backward();
      opt.step();
    }
    join.join();
  }
  for (size_t i = 0; i < model->parameters().size(); ++i) {
    const Tensor mine = model->parameters()[i].data(), hi = mine.clone(), lo = mine.clone();
    const double scale = ref->parameters()[i].data().abs().max().item();
    EXPECT(max_abs_diff(mine, ref->parameters()[i].data()) < 1e-5 * scale, "parameter ", i,
           ": Join's weights differ from the reference by ", max_abs_diff(mine, ref->parameters()[i].data()));
    pg->all_reduce(hi, ReduceOp::Max);
    pg->all_reduce(lo, ReduceOp::Min);
    EXPECT(bitwise_equal(hi, lo), "parameter ", i, ": ranks differ after Join");
  }
  for (auto& [name, b] : model->named_buffers()) {  // the last joiner's BatchNorm statistics everywhere
    const Tensor hi = b.data().to(kFloat64), lo = hi.clone();
    pg->all_reduce(hi, ReduceOp::Max);
    pg->all_reduce(lo, ReduceOp::Min);
    EXPECT(bitwise_equal(hi, lo), "buffer ", name, ": ranks differ after Join");
  }
}

// Join with throw_on_early_termination: rank 0 (3 batches) throws in join(), ranks 1 and 2
// in their 4th forward; the collectives still line up (a barrier afterwards completes).
void check_join_throw() {
  const std::vector<int64_t> batches{3, 5, 8};
  auto model = make_mlp();
  DistributedDataParallel ddp(model, pg);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  int64_t threw_at = -1;
  try {
    Join join({&ddp}, {.throw_on_early_termination = true});
    for (int64_t s = 0; s < batches[pg->rank()]; ++s) {
      threw_at = s;
      opt.zero_grad();
      loss_of(ddp, pg->rank(), s).backward();
      opt.step();
    }
    threw_at = batches[pg->rank()];
    join.join();
    threw_at = -1;
  } catch (const Error& e) {
    EXPECT(std::string(e.what()).find("throw_on_early_termination") != std::string::npos, "unexpected error ",
           e.what());
  }
  EXPECT(threw_at == 3, "threw at step ", threw_at, ", expected 3 (rank 0 in join, the others in forward)");
  pg->barrier();
}

// The default hook with 3 ranks, where x·(1/3) and x/3 differ: DDP (one bucket) is bit for bit
// what the arithmetic before hooks gives on the same flat buffer: gradients in bucket order,
// times 1/3, one sum all-reduce.
void check_default_flat() {
  auto model = make_mlp(), manual = make_mlp();
  DistributedDataParallel ddp(model, pg);
  EXPECT(ddp.stats().bucket_bytes.size() == 1, "expected one bucket");
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  optim::SGD manual_opt(manual->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  auto params = manual->parameters();
  for (int64_t s = 0; s < 3; ++s) {
    opt.zero_grad();
    loss_of(ddp, pg->rank(), s).backward();
    opt.step();
    manual_opt.zero_grad();
    loss_of(*manual, pg->rank(), s).backward();
    std::vector<Tensor> flat;
    for (size_t i = params.size(); i-- > 0;) flat.push_back(params[i].grad().reshape({params[i].numel()}));
    Tensor bucket = cat(flat);
    bucket.mul_(1.0 / pg->size());
    pg->all_reduce(bucket);
    int64_t at = 0;
    for (size_t i = params.size(); i-- > 0;) {
      params[i].grad().copy_(bucket.narrow(0, at, params[i].numel()).view(params[i].shape()));
      at += params[i].numel();
    }
    manual_opt.step();
  }
  for (size_t i = 0; i < params.size(); ++i)
    EXPECT(bitwise_equal(model->parameters()[i].data(), params[i].data()), "parameter ", i,
           ": DDP differs from g/W in one flat all-reduce");
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string what = argc > 1 ? argv[1] : "";
  InitOptions opts;
  opts.timeout = std::chrono::seconds(20);
  pg = init_process_group("gloo", opts);
  const std::map<std::string, std::function<void()>> scenarios{
      {"default", check_default},
      {"default3", check_default_flat},
      {"fp16", [] { check_compressed(false); }},
      {"bf16", [] { check_compressed(true); }},
      {"powersgd1", [] { check_powersgd(1); }},
      {"powersgd2", [] { check_powersgd(2); }},
      {"topk", check_topk},
      {"powersgd-torch", check_powersgd_torch},
      {"join", [] { check_join(true); }},
      {"join-active", [] { check_join(false); }},
      {"join-throw", check_join_throw},
  };
  DDL_CHECK(scenarios.count(what), "hooks_worker: unknown scenario '", what, "'");
  scenarios.at(what)();
  std::printf("%s ok\n", what.c_str());
  pg.reset();
  destroy_process_group();
  return 0;
} catch (const std::exception& e) {
  std::printf("FAIL: %s\n", e.what());
  return 1;
}
