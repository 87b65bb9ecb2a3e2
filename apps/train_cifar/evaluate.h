// Test-set evaluation, sharded over the ranks: rank r scores a contiguous
// slice of the test set and the confusion matrices are summed with all_reduce,
// so every rank gets the exact whole-test-set figures.
#pragma once

#include <memory>

#include <ddl/data/data.h>
#include <ddl/dist/process_group.h>
#include <ddl/nn/module.h>

namespace ddl::apps {

struct EvalResult {
  double loss = 0, accuracy = 0;
  int64_t samples = 0;
  Tensor confusion;  // int64 [classes, classes]: row = true class, column = predicted
};

EvalResult evaluate(nn::Module& model, const std::shared_ptr<const data::Dataset>& test, int64_t test_size,
                    int64_t num_classes, int64_t batch_size, int64_t loader_workers, dist::ProcessGroup* group);

// Visits [begin, end) in order (one rank's slice of an evaluation).
class RangeSampler : public data::Sampler {
 public:
  RangeSampler(int64_t begin, int64_t end) : begin_(begin), end_(end) {}
  std::vector<int64_t> indices() const override;
  int64_t size() const override { return end_ - begin_; }

 private:
  int64_t begin_, end_;
};

}  // namespace ddl::apps
