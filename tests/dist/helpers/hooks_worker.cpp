// ddlrun test helper for DDP's communication hooks and Join (tests/apps/test_comm_hooks.sh):
// `hooks_worker SCENARIO` joins the job, trains a small MLP on data every rank can rebuild,
// and checks DDP's gradients or weights against a reference computed here from every rank's
// local gradients. Prints "SCENARIO ok" and exits 0, or prints what differed and exits 1.
#include "tests/dist/helpers/hooks_worker.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "apps/examples/topk_hook/topk_hook.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>

using namespace hooks_test;

namespace {

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

// A hook that returns the wrong size is named in an error, not a crash or a garbled view;
// one returning a fresh tensor of the right size has it copied in.
void check_hook_result() {
  auto model = make_mlp();
  DistributedDataParallel bad(model, pg);
  bad.register_comm_hook([](GradBucket& b) { return HookFuture(zeros({b.buffer.numel() + 1})); });
  std::string error;
  try {
    loss_of(bad, pg->rank(), 0).backward();
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT(error.find("comm hook returned [") != std::string::npos, "expected the hook's result named, got '", error,
         "'");
  auto model2 = make_mlp();
  DistributedDataParallel fresh(model2, pg);
  fresh.register_comm_hook([](GradBucket& b) { return HookFuture(full({b.buffer.numel()}, 0.5)); });
  loss_of(fresh, pg->rank(), 0).backward();
  for (auto& p : model2->parameters())
    EXPECT(all(p.grad().eq(0.5)).item() != 0, "a fresh result tensor was not copied into .grad");
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
      {"hook-result", check_hook_result},
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
