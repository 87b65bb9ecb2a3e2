// Small pieces of the training loop kept out of main.cpp: the device and process-group
// backend from the flags, the lr schedule, copying rank 0's buffers to every rank
// before evaluation, and the shutdown every run ends with.
#pragma once

#include <memory>
#include <string>

#include "apps/train_cifar/options.h"
#include <ddl/dist/init.h>
#include <ddl/dist/process_group.h>
#include <ddl/nn/module.h>
#include <ddl/optim/lr_scheduler.h>

namespace ddl::apps {

// The CPU, or cuda:local_rank (one GPU per process: LOCAL_RANK under ddlrun, 0 alone;
// cuda:(local_rank % GPUs) with --share-gpu). Throws ddl::Error "--device cuda: no GPU
// available ..." when there is none, and names the GPU count when local_rank has no GPU
// of its own.
Device training_device(const TrainOptions& o, int local_rank);
// --share-gpu in a multi-process job: sets dist::shared_gpu_nccl_env's variables (this rank's
// NCCL_HOSTID always, the one-node defaults unless the user set them). Call before NCCL starts.
void prepare_shared_gpu(const TrainOptions& o, const dist::LaunchEnv& env);

// The init_process_group backend: "gloo" for --device cpu; for cuda "auto", which sends
// CUDA tensors (gradients, weights) over nccl and the host-side metrics over gloo.
// Throws ddl::Error when this build or machine has no nccl.
std::string process_group_backend(const TrainOptions& o);
// init_process_group's options: --timeout when given, else the DDL_TIMEOUT default.
dist::InitOptions process_group_options(const TrainOptions& o);

// Stepped once per optimizer step: optional linear warm-up, then constant,
// cosine (to 0 at the last step) or step (x0.1 at 50% and 75% of training).
std::shared_ptr<optim::LRScheduler> make_schedule(optim::Optimizer& opt, const TrainOptions& o, int64_t steps_per_epoch,
                                                  int64_t total_steps);

// --sync-bn in a multi-process job: every BatchNorm of `model` becomes a SyncBatchNorm over
// `group` (dist/nn/sync_batch_norm.h), said on rank 0's output. Nothing otherwise.
void maybe_sync_batchnorm(const TrainOptions& o, const std::shared_ptr<nn::Module>& model,
                          const std::shared_ptr<dist::ProcessGroup>& group);

// Broadcasts rank 0's buffers (BatchNorm running statistics) to all ranks.
void sync_buffers(nn::Module& model, dist::ProcessGroup& group);

// How every run ends, training or --eval-only: waits for all ranks (none exits while a
// peer still reads from it), then releases the group and destroy_process_group(). A
// null group (one process) skips the barrier.
void shut_down(std::shared_ptr<dist::ProcessGroup>& group);
// The same with the control group (run_report.h), released after the barrier, before `group`.
void shut_down(std::shared_ptr<dist::ProcessGroup>& group, std::shared_ptr<dist::ProcessGroup>& control);

}  // namespace ddl::apps
