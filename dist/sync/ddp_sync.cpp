// ddp: the bucketed, overlapped DistributedDataParallel (dist/ddp/ddp.h) behind the
// SyncStrategy interface. All the work happens inside backward (see Note [Buckets] in
// dist/ddp/ddp.cpp); after_backward only reads how long forward (buffer broadcast) and
// backward (the last buckets) waited for the network.
#include <ddl/dist/ddp/ddp.h>
#include <ddl/dist/ddp/ddp_env.h>
#include <ddl/dist/sync/builtins.h>

namespace ddl::dist::detail {

namespace {

class DDPSync final : public SyncStrategy {
 public:
  // DDP broadcasts rank 0's parameters and buffers itself. Bucket sizes: DDL_BUCKET_CAP_MB
  // and DDL_FIRST_BUCKET_MB where set (train_cifar's flags set them).
  DDPSync(ModelPtr model, GroupPtr group)
      : ddp_(std::make_shared<DistributedDataParallel>(std::move(model), std::move(group), ddp_options_from_env())) {}
  std::string name() const override { return "ddp"; }
  nn::Module& model() override { return *ddp_; }
  void after_backward() override {
    comm_.forward_ms = ddp_->stats().last_broadcast_ms;
    comm_.backward_ms = ddp_->stats().last_wait_ms;
  }

 private:
  std::shared_ptr<DistributedDataParallel> ddp_;
};

}  // namespace

std::unique_ptr<SyncStrategy> make_ddp_sync(ModelPtr model, GroupPtr group) {
  return std::make_unique<DDPSync>(std::move(model), std::move(group));
}

}  // namespace ddl::dist::detail
