// Device and backend choice, lr schedule construction, buffer synchronisation, shutdown.
#include "apps/train_cifar/training.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>

#include <ddl/dist/env.h>
#include <ddl/dist/init.h>
#include <ddl/dist/nn/sync_batch_norm.h>
#include <ddl/optim/one_cycle.h>
#include <ddl/tensor/core/devices.h>

namespace ddl::apps {

Device training_device(const TrainOptions& o, int local_rank) {
  if (o.device == "cpu") return Device::cpu();
  const int n = cuda::device_count();
  DDL_CHECK(n > 0, "--device cuda: no GPU available (ddl::cuda::device_count() is 0); use --device cpu");
  DDL_CHECK(local_rank >= 0, "--device cuda: negative local rank ", local_rank);
  if (o.share_gpu) return Device::cuda(local_rank % n);
  DDL_CHECK(local_rank < n, "--device cuda: local rank ", local_rank, " has no GPU of its own: this node has ", n,
            " GPU(s); start at most ", n, " processes per node, or pass --share-gpu");
  return Device::cuda(local_rank);
}

void prepare_shared_gpu(const TrainOptions& o, const dist::LaunchEnv& env) {
  if (!o.share_gpu || env.world_size < 2) return;
  const auto vars = dist::shared_gpu_nccl_env(env.rank, env.local_world_size == env.world_size);
  for (size_t i = 0; i < vars.size(); ++i)  // the first, NCCL_HOSTID, always; the rest unless set
    setenv(vars[i].first.c_str(), vars[i].second.c_str(), /*overwrite=*/i == 0);
}

std::string process_group_backend(const TrainOptions& o) {
  if (o.device == "cpu") return "gloo";
  DDL_CHECK(dist::is_backend_available("nccl"),
            "--device cuda: this build has no nccl backend for multi-process training (configure with NCCL "
            "installed), or no GPU is usable");
  return "auto";
}

dist::InitOptions process_group_options(const TrainOptions& o) {
  dist::InitOptions opts;
  if (o.timeout > 0) opts.timeout = dist::Millis(std::max<int64_t>(1, std::llround(o.timeout * 1000)));
  return opts;
}

namespace {
// lr unchanged: the "constant" schedule.
class ConstantLR : public optim::LRScheduler {
 public:
  explicit ConstantLR(optim::Optimizer& opt) : LRScheduler(opt) { set_step(0); }
  double lr_at(double base, int64_t) const override { return base; }
};
}  // namespace

std::shared_ptr<optim::LRScheduler> make_schedule(optim::Optimizer& opt, const TrainOptions& o, int64_t steps_per_epoch,
                                                  int64_t total_steps) {
  const int64_t warmup = static_cast<int64_t>(std::llround(o.warmup_epochs * static_cast<double>(steps_per_epoch)));
  const int64_t rest = std::max<int64_t>(total_steps - warmup, 1);
  std::shared_ptr<optim::LRScheduler> main;
  if (o.schedule == "cosine") {
    main = std::make_shared<optim::CosineAnnealingLR>(opt, rest);
  } else if (o.schedule == "onecycle") {  // per batch, over the whole run (torch's OneCycleLR defaults)
    return std::make_shared<optim::OneCycleLR>(opt, o.lr, std::max<int64_t>(total_steps, 1));
  } else if (o.schedule == "step") {
    main = std::make_shared<optim::MultiStepLR>(opt, std::vector<int64_t>{rest / 2, rest * 3 / 4}, 0.1);
  } else {
    main = std::make_shared<ConstantLR>(opt);
  }
  if (warmup == 0) return main;
  return std::make_shared<optim::WarmupLR>(opt, warmup, 0.1, main);
}

void maybe_sync_batchnorm(const TrainOptions& o, const std::shared_ptr<nn::Module>& model,
                          const std::shared_ptr<dist::ProcessGroup>& group) {
  if (!o.sync_bn || !group) return;
  DDL_CHECK(o.device == "cpu", "--sync-bn: SyncBatchNorm runs on CPU tensors (gloo) only; use --device cpu");
  dist::convert_sync_batchnorm(model, group);
  if (group->rank() == 0)
    std::cout << "sync-bn: " << dist::count_sync_batchnorm(*model) << " BatchNorm layers use the statistics of all "
              << group->size() << " ranks" << std::endl;
}

void sync_buffers(nn::Module& model, dist::ProcessGroup& group) {
  for (auto& [name, v] : model.named_buffers()) group.broadcast(v.data(), 0);
}

void shut_down(std::shared_ptr<dist::ProcessGroup>& group) {
  if (group) group->barrier();
  group.reset();
  dist::destroy_process_group();  // before exit: NCCL must not be torn down after CUDA
}

void shut_down(std::shared_ptr<dist::ProcessGroup>& group, std::shared_ptr<dist::ProcessGroup>& control) {
  control.reset();
  shut_down(group);  // its barrier
}

}  // namespace ddl::apps
