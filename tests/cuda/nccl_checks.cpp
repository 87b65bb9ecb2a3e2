// See nccl_checks.h.
#include "tests/cuda/nccl_checks.h"

#include <algorithm>
#include <cmath>

#include "tests/common/collective_checks.h"
#include "tests/common/small_cnn.h"
#include <ddl/tensor/core/devices.h>

namespace ddl::test {

using namespace ddl::dist;

dist::InitOptions nccl_test_options() {
  InitOptions o;
  o.timeout = Millis(60000);
  return o;
}

namespace {
// `steps` SGD steps on a CNN on `dev`; this rank takes rows [rank*b, (rank+1)*b) of each
// global batch. With a group the model is wrapped in DDP.
std::vector<float> train_cnn(Device dev, std::shared_ptr<ProcessGroup> pg, int rank, int world) {
  const int64_t steps = 3, global_b = 8, b = global_b / world;
  Generator g(11);
  const Tensor x = randn({steps * global_b, 1, 8, 8}, g), y = randint(0, 3, {steps * global_b}, g);
  auto model = make_small_cnn();
  model->to(dev);
  std::shared_ptr<DistributedDataParallel> ddp;
  if (pg)
    ddp = std::make_shared<DistributedDataParallel>(model, pg,
                                                    DDPOptions{.bucket_cap_mb = 0.002, .first_bucket_mb = 0.0005});
  nn::Module& net = ddp ? static_cast<nn::Module&>(*ddp) : *model;
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  for (int64_t s = 0; s < steps; ++s) {
    const Tensor xb = x.narrow(0, s * global_b + rank * b, b).to(dev),
                 yb = y.narrow(0, s * global_b + rank * b, b).to(dev);
    Variable loss = cross_entropy(net(Variable(xb)), yb);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  return flat_params(*model);
}

}  // namespace

void check_native(ProcessGroup& pg, Device dev) {
  const int r = pg.rank(), w = pg.size();
  // A kernel queued on the current stream just before the collective must be seen by it.
  Tensor t = zeros(Shape{1 << 20}, TensorOptions(DType::Float32, dev));
  t.add_(1.0 + r);
  pg.all_reduce(t);
  expect_values<float>(
      t.narrow(0, 0, 16), [&](int64_t) { return w * (w + 1) / 2; }, "ordered all_reduce");
  // A transposed CUDA view is reduced in place through a staging copy.
  Tensor base = make<float>(24, [&](int64_t i) { return i * (r + 1); }).to(dev).view(Shape{4, 6});
  Tensor view = base.t();
  pg.all_reduce(view);
  expect_values<float>(
      base.view(Shape{24}), [&](int64_t i) { return i * (w * (w + 1) / 2); }, "strided view");
  // Two all-reduces of one transposed view back to back: the second's staging copy must read
  // the first's copy-back (both run on the lane), so each rank holds w * (w(w+1)/2) * x.
  const int64_t big = 1024;
  Tensor base2 = make<float>(big * big, [&](int64_t i) { return (i % 97) * (r + 1); }).to(dev).view(Shape{big, big});
  Tensor view2 = base2.t();
  auto first = pg.all_reduce_async(view2);
  auto second = pg.all_reduce_async(view2);
  second->wait();
  expect_values<float>(
      base2.view(Shape{big * big}), [&](int64_t i) { return (i % 97) * w * (w * (w + 1) / 2); },
      "two all-reduces of one view");
  first->wait(Millis(60000));
  second->wait(Millis(60000));
  // Barrier, then counters: an all-reduce of B bytes moves 2(w-1)/w * B each way (ring).
  // The watchdog counts an operation when its end event fires, and wait() does not block the
  // host on nccl (Note [NCCL Work::wait]): wait(timeout) does, so the count is in by then.
  pg.barrier();
  pg.reset_stats();
  Tensor c = ones(Shape{1000}, TensorOptions(DType::Float32, dev));
  pg.all_reduce_async(c)->wait(Millis(60000));
  const CommStats s = pg.stats();
  DIST_EXPECT(s[OpKind::AllReduce].calls == 1, "calls ", s[OpKind::AllReduce].calls);
  DIST_EXPECT(s[OpKind::AllReduce].bytes_sent == 2 * (w - 1) * 4000 / w, "sent ", s[OpKind::AllReduce].bytes_sent);
  // CPU tensors are refused with a pointer to gloo.
  Tensor cpu = zeros(Shape{4});
  bool threw = false;
  try {
    pg.all_reduce(cpu);
  } catch (const Error& e) {
    threw = std::string(e.what()).find("gloo") != std::string::npos;
  }
  DIST_EXPECT(threw, "a CPU tensor must be refused naming gloo");
  DIST_EXPECT(!pg.is_broken(), "argument errors must not break the group");
}

void check_barrier_after_p2p(ProcessGroup& pg, Device dev) {
  DIST_EXPECT(pg.size() == 2, "check_barrier_after_p2p needs world 2, got ", pg.size());
  const int64_t n = 1 << 16;
  Tensor t = zeros(Shape{n}, TensorOptions(DType::Float32, dev));
  if (pg.rank() == 0) {
    Generator g(1);
    const Tensor a = rand({4096, 4096}, g, TensorOptions(DType::Float32, dev));
    cuda::synchronize(dev.index);  // t and a are ready for the side stream
    std::shared_ptr<Work> sent;
    {
      // The send waits for ~100 ms of GEMMs on a side stream, so the barrier (a plain
      // all-reduce on the idle current stream) completes before the message leaves: rank 1
      // orders its read through received->wait(), not through barrier().
      cuda::StreamGuard side(cuda::Stream::create(dev.index));
      for (int i = 0; i < 40; ++i) (void)matmul(a, a);
      t.add_(42.0);
      sent = pg.send_async(t, 1);
    }
    pg.barrier();
    sent->wait(Millis(60000));
  } else {
    auto received = pg.recv_async(t, 0);
    pg.barrier();      // does not cover the receive (Note [NCCL barrier])
    received->wait();  // the current stream waits for it; the host goes on
    expect_values<float>(
        t.narrow(0, n - 16, 16), [](int64_t) { return 42; }, "a receive before barrier()");
    received->wait(Millis(60000));
  }
}

void check_recv_across_barrier(ProcessGroup& pg, Device dev) {
  DIST_EXPECT(pg.size() == 2, "check_recv_across_barrier needs world 2, got ", pg.size());
  const int64_t n = 1 << 16;
  Tensor t = zeros(Shape{n}, TensorOptions(DType::Float32, dev));
  if (pg.rank() == 0) {
    auto received = pg.recv_async(t, 1);
    pg.barrier();  // rank 1 sends only after its own barrier
    received->wait();
    expect_values<float>(
        t.narrow(0, n - 16, 16), [](int64_t) { return 7; }, "a receive whose send follows the barrier");
    received->wait(Millis(60000));
  } else {
    pg.barrier();
    t.add_(7.0);
    pg.send_async(t, 0)->wait(Millis(60000));
  }
  DIST_EXPECT(!pg.is_broken(), "recv, barrier, send: ", pg.broken_reason());
}

void check_recv_barrier_send_both(ProcessGroup& pg, Device dev) {
  DIST_EXPECT(pg.size() == 2, "check_recv_barrier_send_both needs world 2, got ", pg.size());
  const int r = pg.rank(), peer = 1 - r;
  const int64_t n = 1 << 16;
  Tensor in = zeros(Shape{n}, TensorOptions(DType::Float32, dev));
  Tensor out = full(Shape{n}, 10.0 + r, TensorOptions(DType::Float32, dev));
  auto received = pg.recv_async(in, peer);
  pg.barrier();  // the peer's send comes only after its own barrier
  auto sent = pg.send_async(out, peer);
  received->wait();
  expect_values<float>(
      in.narrow(0, n - 16, 16), [&](int64_t) { return 10 + peer; }, "recv; barrier; send on both ranks");
  received->wait(Millis(60000));
  sent->wait(Millis(60000));
  // A pairwise exchange into a non-contiguous target: its copy-back must not order this
  // rank's later send after the receive (Note [NCCL stream ordering]).
  Tensor base = zeros(Shape{256, 256}, TensorOptions(DType::Float32, dev));
  auto received_t = pg.recv_async(base.t(), peer);
  auto sent_t = pg.send_async(out, peer);
  received_t->wait();
  expect_values<float>(
      base.view(Shape{n}).narrow(0, n - 16, 16), [&](int64_t) { return 10 + peer; }, "recv into a view, then send");
  received_t->wait(Millis(60000));
  sent_t->wait(Millis(60000));
  DIST_EXPECT(!pg.is_broken(), "recv; barrier; send on both ranks: ", pg.broken_reason());
}

void ddp_matches_one_process(std::shared_ptr<ProcessGroup> pg, Device dev) {
  const auto ref = train_cnn(dev, nullptr, 0, 1);
  const auto got = train_cnn(dev, pg, pg->rank(), pg->size());
  const double diff = max_rel_diff(got, ref);
  DIST_EXPECT(diff < 1e-4, "rank ", pg->rank(), ": DDP on ", dev, " differs from one process by ", diff);
}

}  // namespace ddl::test
