// SyncBatchNorm (torch.nn.SyncBatchNorm): batch normalisation whose training statistics
// span every rank of a process group, forward and backward, so N ranks of batch b
// normalise as one process on the concatenated batch of N·b (ranks may hold different
// batch sizes). Evaluation with running statistics stays local: there is nothing to sync.
// It does not widen 16-bit inputs (float32 and float64 only) and has no double backward.
#pragma once

#include <memory>

#include <ddl/dist/process_group.h>
#include <ddl/nn/module.h>

namespace ddl::dist {

// x: [N, C, *] (N may differ across ranks, and be 0 on some); weight, bias: [C] or
// undefined; running_mean, running_var: [C] or both undefined. Normalises with the
// group's mean and biased variance; updates the running statistics in place, as PyTorch,
// with the unbiased variance over the group's count (the same on every rank). Gradients
// reach x (through the group's sums, so d(Σ_ranks loss)/dx) and weight and bias (this
// rank's share, which DDP's all-reduce then combines). Every rank of the group must call
// it, and backward through it, in the same order: forward all-gathers, backward all-reduces.
Variable sync_batch_norm(const Variable& x, const Variable& weight, const Variable& bias, Tensor running_mean,
                         Tensor running_var, double momentum, double eps, std::shared_ptr<ProcessGroup> group);

// Makes every BatchNorm1d/2d/3d in `module` (itself included) a SyncBatchNorm over `group`
// in place, keeping its parameters, buffers and handles (so models that hold a layer in a
// typed member, as ResNet's blocks do, are converted too), and returns `module`.
// torch.nn.SyncBatchNorm.convert_sync_batchnorm. Precondition: group is not null.
std::shared_ptr<nn::Module> convert_sync_batchnorm(std::shared_ptr<nn::Module> module,
                                                   std::shared_ptr<ProcessGroup> group);
// How many BatchNorm layers of `module` are synchronised.
int count_sync_batchnorm(const nn::Module& module);

}  // namespace ddl::dist
