// HookFuture, the built-in allreduce, fp16 and bf16 hooks, and hooks by name.
#include <ddl/dist/hooks/comm_hook.h>
#include <ddl/dist/hooks/powersgd.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::dist {

HookFuture HookFuture::then(std::function<HookFuture(const Tensor&)> next) && {
  next_.push_back(std::move(next));
  return std::move(*this);
}

Tensor HookFuture::wait() {
  if (work_) work_->wait();
  Tensor value = value_;
  // Each step's own future is waited (its steps included) before the next step runs.
  for (auto& step : next_) value = step(value).wait();
  return value;
}

namespace hooks {

namespace {

// buffer.to(dtype) / divisor, summed in `dtype`, then copied back into buffer (PyTorch's
// fp16_compress_hook and bf16_compress_hook).
HookFuture compressed_all_reduce(GradBucket& b, DType dtype) {
  DDL_CHECK(is_floating(b.buffer.dtype()), "comm hook ", dtype_name(dtype),
            "_compress: expected a floating bucket, got ", b.buffer.dtype());
  Tensor compressed = b.buffer.to(dtype);
  compressed.div_(b.divisor);  // in 16 bits, before the sum, as PyTorch: the sum then cannot overflow
  auto work = b.group->all_reduce_async(compressed, ReduceOp::Sum);
  Tensor buffer = b.buffer;
  return HookFuture(compressed, work).then([buffer](const Tensor& sum) {
    buffer.copy_(sum);  // decompress
    return HookFuture(buffer);
  });
}

bool parse_rank(const std::string& s, int64_t& rank) {
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  rank = std::stoll(s);
  return rank >= 1;
}

}  // namespace

CommHook allreduce_hook() {
  return [](GradBucket& b) {
    b.buffer.mul_(1.0 / b.divisor);  // the multiplication DDP did per gradient before hooks
    return HookFuture(b.buffer, b.group->all_reduce_async(b.buffer, ReduceOp::Sum));
  };
}

CommHook fp16_compress_hook() {
  return [](GradBucket& b) { return compressed_all_reduce(b, kFloat16); };
}

CommHook bf16_compress_hook() {
  return [](GradBucket& b) { return compressed_all_reduce(b, kBFloat16); };
}

std::string comm_hook_spec_problem(const std::string& spec) {
  if (spec == "allreduce" || spec == "fp16" || spec == "bf16") return "";
  int64_t rank = 0;
  if (spec.rfind("powersgd:", 0) == 0 && parse_rank(spec.substr(9), rank)) return "";
  return "unknown comm hook '" + spec + "': expected allreduce, fp16, bf16 or powersgd:RANK (RANK >= 1)";
}

CommHook make_comm_hook(const std::string& spec) {
  const std::string problem = comm_hook_spec_problem(spec);
  DDL_CHECK(problem.empty(), "make_comm_hook: ", problem);
  if (spec == "allreduce") return allreduce_hook();
  if (spec == "fp16") return fp16_compress_hook();
  if (spec == "bf16") return bf16_compress_hook();
  PowerSGDOptions o;
  parse_rank(spec.substr(9), o.matrix_approximation_rank);
  o.start_powerSGD_iter = 10;  // PyTorch's 1000 is longer than a short run
  return powersgd_hook(std::make_shared<PowerSGDState>(o));
}

}  // namespace hooks
}  // namespace ddl::dist
