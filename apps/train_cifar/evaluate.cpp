// Sharded evaluation.
#include "apps/train_cifar/evaluate.h"

#include <numeric>

#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>
#include <ddl/trace/trace.h>

namespace ddl::apps {

std::vector<int64_t> RangeSampler::indices() const {
  std::vector<int64_t> v(static_cast<size_t>(end_ - begin_));
  std::iota(v.begin(), v.end(), begin_);
  return v;
}

EvalResult evaluate(nn::Module& model, const std::shared_ptr<const data::Dataset>& test, int64_t test_size,
                    int64_t num_classes, int64_t batch_size, int64_t loader_workers, dist::ProcessGroup* group) {
  DDL_TRACE_SPAN("evaluate", "eval");
  const int64_t rank = group ? group->rank() : 0, world = group ? group->size() : 1;
  const int64_t begin = test_size * rank / world, end = test_size * (rank + 1) / world;
  // Batches go to the model's device (from page-locked memory on a GPU); the totals stay
  // on the host (gloo reduces them).
  const auto params = model.parameters();
  const Device device = params.empty() ? Device::cpu() : params.front().device();
  data::DataLoaderOptions lo;
  lo.batch_size = batch_size;
  lo.sampler = std::make_shared<RangeSampler>(begin, end);
  lo.num_workers = loader_workers;
  lo.pin_memory = device.is_cuda();
  data::DataLoader loader(test, lo);

  const bool was_training = model.is_training();
  model.eval();
  NoGradGuard no_grad;
  // [loss sum, then the confusion matrix], summed over ranks in one all_reduce.
  Tensor totals = zeros({1 + num_classes * num_classes}, DType::Float64);
  double* t = totals.data<double>();
  for (const data::Batch& b : loader) {
    const Tensor target = b.target.to(device);
    const Tensor logits = model.forward(Variable(b.data.to(device))).data();
    CrossEntropyOptions ce;
    ce.reduction = Reduction::Sum;
    const Tensor loss = cross_entropy(Variable(logits), target, ce).data();
    // The loss and the predictions reach the host in one copy: one wait for the GPU per batch.
    const auto got =
        to_vector<double>(cat({loss.reshape({1}).to(DType::Float64), argmax(logits, 1).to(DType::Float64)}, 0));
    t[0] += got[0];
    const auto truth = to_vector<int64_t>(b.target);
    for (size_t i = 0; i < truth.size(); ++i) t[1 + truth[i] * num_classes + static_cast<int64_t>(got[1 + i])] += 1;
  }
  if (group && world > 1) group->all_reduce(totals);
  model.train(was_training);

  EvalResult r;
  r.confusion = totals.narrow(0, 1, num_classes * num_classes).reshape({num_classes, num_classes}).to(DType::Int64);
  const auto cm = to_vector<int64_t>(r.confusion);
  int64_t correct = 0;
  for (int64_t c = 0; c < num_classes; ++c) correct += cm[c * num_classes + c];
  r.samples = std::accumulate(cm.begin(), cm.end(), int64_t{0});
  r.loss = r.samples ? t[0] / static_cast<double>(r.samples) : 0;
  r.accuracy = r.samples ? static_cast<double>(correct) / static_cast<double>(r.samples) : 0;
  return r;
}

}  // namespace ddl::apps
