// The recording process group (see recording_group.h).
#include "apps/grade/recording_group.h"

namespace ddl::grade {

RecordingGroup::RecordingGroup(std::shared_ptr<dist::ProcessGroup> inner)
    : dist::ProcessGroup(inner->rank(), inner->size()), inner_(std::move(inner)) {}

void RecordingGroup::begin_step() {
  std::lock_guard<std::mutex> lock(mu_);
  steps_.emplace_back();
}

void RecordingGroup::gradient_arrived(int64_t param) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!steps_.empty()) steps_.back().arrivals.push_back(param);
}

std::vector<RecordingGroup::Step> RecordingGroup::steps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return steps_;
}

std::shared_ptr<dist::Work> RecordingGroup::all_reduce_async(const Tensor& t, dist::ReduceOp op) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!steps_.empty())
      steps_.back().all_reduces.push_back({t.numel(), static_cast<int64_t>(steps_.back().arrivals.size())});
  }
  return inner_->all_reduce_async(t, op);
}

}  // namespace ddl::grade
