// dist/hooks/: communication hooks for DistributedDataParallel's gradient buckets, as
// PyTorch's DistributedDataParallel.register_comm_hook (torch/distributed/algorithms/
// ddp_comm_hooks/). A hook gets one bucket (its flat gradient buffer, undivided) and
// returns a HookFuture whose value is the averaged bucket; DDP calls it instead of its
// own all-reduce. This file: the types and the built-in allreduce, fp16 and bf16 hooks;
// powersgd.h holds PowerSGD, join.h the Join context for uneven inputs.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ddl/autograd/variable.h>
#include <ddl/dist/process_group.h>

namespace ddl::dist {

// One bucket, as a hook sees it (PyTorch's dist.GradBucket).
struct GradBucket {
  size_t index = 0;                  // bucket k, in launch order (the same on every rank)
  bool is_last = false;              // the last bucket of this backward
  Tensor buffer;                     // every gradient of the bucket, contiguous and *not* divided
  std::vector<Tensor> gradients;     // views of buffer, shaped as the parameters
  std::vector<Variable> parameters;  // the parameters, in slot order
  // What averaging divides by: the world size; under Join with divide_by_initial_world_size
  // = false, the ranks that still have data (see Note [Join divisor] in ddp_join.cpp).
  double divisor = 1;
  ProcessGroup* group = nullptr;  // DDP's process group
};

// A hook's answer: communication in flight and the tensor that will hold the result.
// then() chains a step to run once it completes. DDP waits on its buckets in bucket
// order and runs the chained steps on its own thread as it waits, so collectives that a
// step issues come in the same order on every rank (PyTorch's Future.then runs them on
// the completing thread instead).
class HookFuture {
 public:
  // A result that is ready now (no work), or `value` once `work` has completed.
  explicit HookFuture(Tensor value, std::shared_ptr<Work> work = nullptr)
      : value_(std::move(value)), work_(std::move(work)) {}
  // next(value) runs after this future completes; its future's value is the chain's.
  HookFuture then(std::function<HookFuture(const Tensor& value)> next) &&;
  // Waits for the work and every chained step; returns the final value.
  Tensor wait();
  // The first work, for DDP's timeline (null when the result was ready at once).
  const std::shared_ptr<Work>& work() const { return work_; }

 private:
  Tensor value_;
  std::shared_ptr<Work> work_;
  std::vector<std::function<HookFuture(const Tensor&)>> next_;
};

// Averages bucket.buffer over the group: the hook may change bucket.buffer (the built-ins
// work in place) and returns the averaged bucket, the same shape and dtype as buffer.
using CommHook = std::function<HookFuture(GradBucket& bucket)>;

namespace hooks {

// PyTorch's allreduce_hook: buffer · (1/divisor), then a sum all-reduce. DDP's default;
// bit for bit what DDP did before hooks (it scaled each gradient by 1/world as it copied it).
CommHook allreduce_hook();
// PyTorch's fp16_compress_hook: the buffer cast to float16 and divided by the divisor
// there (before the all-reduce, as PyTorch does, so that the sum cannot overflow), summed
// in float16, then written back into the float32 buffer. Half the bytes on the wire.
CommHook fp16_compress_hook();
// bf16_compress_hook: the same in bfloat16 (float32's range, 8 bits of mantissa).
CommHook bf16_compress_hook();

// A hook by name, for command lines: "allreduce", "fp16", "bf16", or "powersgd:RANK"
// (PowerSGD with PyTorch's defaults except start_powerSGD_iter, which is 10 here: train_cifar's
// runs are short). Throws ddl::Error naming the spec otherwise.
CommHook make_comm_hook(const std::string& spec);
// "" when make_comm_hook accepts spec, else why not.
std::string comm_hook_spec_problem(const std::string& spec);

}  // namespace hooks
}  // namespace ddl::dist
