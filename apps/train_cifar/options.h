// train_cifar's command line: every flag, its default and its check.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddl::apps {

struct TrainOptions {
  std::string model = "vgg11_bn";
  std::string dataset = "fashion-mnist";  // cifar10 | fashion-mnist | mnist | folder | synthetic
  std::string data;                       // directory; default per dataset
  int64_t epochs = 1;
  int64_t batch_size = 128;  // per worker
  double lr = 0.05, momentum = 0.9, weight_decay = 5e-4;
  std::string schedule = "constant";  // constant | cosine | step | onecycle
  bool nesterov = false;              // --nesterov: SGD with Nesterov momentum
  double warmup_epochs = 0;
  bool augment = false;  // random crop + flip (on by default for CIFAR)
  bool augment_set = false;
  double label_smoothing = 0;
  uint64_t seed = 0;
  int threads = 0;  // 0: all cores
  int64_t loader_workers = 1;
  std::string device = "cpu";    // cpu | cuda (cuda:LOCAL_RANK under ddlrun)
  bool share_gpu = false;        // ranks of a node share its GPUs (local rank % GPUs)
  std::string backend = "auto";  // auto | gloo | nccl: auto = gloo on cpu, nccl on cuda
  std::string sync = "ddp";
  bool sync_bn = false;  // --sync-bn: BatchNorm statistics over every rank (dist::convert_sync_batchnorm)
  std::string comm_hook = "allreduce";  // --sync ddp: how buckets are averaged (dist/hooks/comm_hook.h)
  bool uneven = false;                  // no sampler padding; DDP under a Join (uneven_sampler.h)
  std::vector<std::string> plugins;     // --plugin FILE.so: strategies loaded (already) at parse time
  // --bucket-cap-mb, --first-bucket-mb: ddp's bucket sizes in MiB; 0: DDL_*_MB or the default.
  double bucket_cap_mb = 0, first_bucket_mb = 0;
  int64_t log_every = 50;
  int64_t eval_every = 1;  // epochs
  std::string snapshot;
  int64_t snapshot_every = 1;  // epochs
  int64_t snapshot_every_steps = 0;
  std::string load, save, metrics;
  std::string report;  // --report FILE.html (rank 0 writes it)
  std::string trace;   // --trace FILE.json: the job's merged timeline (rank 0 writes it)
  bool eval_only = false;
  bool allow_nonfinite = false;                 // --load: accept NaN/Inf weights
  int64_t train_samples = 0, test_samples = 0;  // 0: all
  double target_accuracy = 0;                   // percent, for convergence time; 0: none
  bool stop_at_target = false;                  // --stop-at-target: end after the first evaluation reaching it
  bool progress = true;
  double timeout = 0;  // seconds for rendezvous and each collective; 0: DDL_TIMEOUT or 300
  // Fault injection (docs/cluster.md, "Failure injection"), skipped after a resume:
  int64_t crash_at_step = 0;  // rank crash_rank exits with status 3 after this global step
  int crash_rank = 0;
  int64_t hang_at_step = 0;  // rank hang_rank stops itself with SIGSTOP after this global step
  int hang_rank = 0;
};

// The fault this rank injects after global step `step` (crash: _Exit(3); hang:
// raise(SIGSTOP)), if any; nothing after a resume, so --max-restarts can recover.
void inject_fault(const TrainOptions& o, int64_t step, int rank, bool resumed);

// Parses argv; prints --help and exits 0, or prints the bad flag and exits 2.
TrainOptions parse_options(int argc, char** argv);

}  // namespace ddl::apps
