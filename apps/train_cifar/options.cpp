// train_cifar's flags (CLI11): names kept from the first version of the app.
#include "apps/train_cifar/options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>

#include "apps/common/finite_range.h"
#include "apps/train_cifar/buckets.h"
#include "apps/train_cifar/datasets.h"
#include <ddl/base/error.h>
#include <ddl/dist/hooks/comm_hook.h>
#include <ddl/dist/sync/plugin.h>
#include <ddl/dist/sync/registry.h>

namespace ddl::apps {

namespace {

// A flag error found after parsing: said the way CLI11 says its own, exit status 2.
[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << message << "\nRun with --help for more information.\n";
  std::exit(2);
}

// Loads every --plugin FILE (or --plugin=FILE) before the flags are parsed, so that
// --sync accepts, and --help lists, the strategies the plugins register.
void load_plugins(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string path;
    if (a == "--plugin" && i + 1 < argc)
      path = argv[++i];
    else if (a.rfind("--plugin=", 0) == 0)
      path = a.substr(9);
    else
      continue;
    try {
      dist::load_sync_plugin(path);
    } catch (const Error& e) {
      usage_error(std::string("--plugin: ") + e.what());
    }
  }
}

// One line per registered strategy, for --help.
std::string sync_help() {
  std::string text = "synchronisation strategy (docs/sync.md):";
  for (const auto& s : dist::sync_strategies()) {
    text += "\n  " + s.usage() + ": " + s.info.help;
    if (s.origin != "built-in") text += " [" + s.origin + "]";
  }
  return text;
}

}  // namespace

TrainOptions parse_options(int argc, char** argv) {
  TrainOptions o;
  CLI::App app{
      "Train a VGG (or ResNet-18/MLP) on CIFAR-10, Fashion-MNIST, MNIST, an image folder or synthetic data,\n"
      "alone or under ddlrun with one of several gradient-synchronisation strategies."};
  app.add_option("--model", o.model, "vgg11|13|16|19[_bn], resnet18, resnet9_small or mlp")->capture_default_str();
  app.add_option("--dataset", o.dataset, "cifar10, fashion-mnist, mnist, folder or synthetic")
      ->check(CLI::IsMember({"cifar10", "fashion-mnist", "mnist", "folder", "synthetic"}))
      ->capture_default_str();
  app.add_option("--data", o.data,
                 std::string("dataset directory: required for mnist, cifar10 and folder; fashion-mnist "
                             "defaults to Debian's ") +
                     kFashionMnistDir + " (MNIST has no package)");
  app.add_option("--epochs", o.epochs, "training epochs")
      ->check(CLI::Range(int64_t{0}, int64_t{100000}))
      ->capture_default_str();
  app.add_option("--batch-size", o.batch_size, "batch size per worker")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--lr", o.lr, "learning rate (peak, after warm-up)")
      ->check(ddl::apps::FiniteRange(1e-12, 1e3))
      ->capture_default_str();
  app.add_option("--momentum", o.momentum, "SGD momentum")
      ->check(ddl::apps::FiniteRange(0.0, 0.9999))
      ->capture_default_str();
  app.add_flag("--nesterov", o.nesterov, "SGD with Nesterov momentum (torch.optim.SGD's nesterov=True)");
  app.add_option("--weight-decay", o.weight_decay, "L2 weight decay")
      ->check(ddl::apps::FiniteRange(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--schedule", o.schedule,
                 "lr schedule over epochs: constant, cosine, step (x0.1 at 50% and 75%) or onecycle (OneCycleLR's "
                 "defaults, peak --lr; no --warmup-epochs)")
      ->check(CLI::IsMember({"constant", "cosine", "step", "onecycle"}))
      ->capture_default_str();
  app.add_option("--warmup-epochs", o.warmup_epochs, "linear lr warm-up, in epochs (fractions allowed)")
      ->check(ddl::apps::FiniteRange(0.0, 1000.0))
      ->capture_default_str();
  auto* aug =
      app.add_option("--augment", o.augment, "random crop (padding 4) and horizontal flip; default on for cifar10");
  app.add_option("--label-smoothing", o.label_smoothing, "cross-entropy label smoothing")
      ->check(ddl::apps::FiniteRange(0.0, 1.0));
  app.add_option("--seed", o.seed, "seed for initialisation, shuffling and augmentation")->capture_default_str();
  app.add_option("--timeout", o.timeout,
                 "seconds a rank waits for the others (rendezvous, each collective) before failing; "
                 "0: DDL_TIMEOUT, else 300")
      ->check(ddl::apps::FiniteRange(0.0, 1e7));
  app.add_option("--threads", o.threads, "compute threads per worker (0: all cores)")->check(CLI::Range(0, 1024));
  app.add_option("--loader-workers", o.loader_workers, "data-loading threads per worker")
      ->check(CLI::Range(int64_t{0}, int64_t{64}))
      ->capture_default_str();
  app.add_option("--device", o.device, "cpu or cuda (under ddlrun, rank with LOCAL_RANK i uses GPU i)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  app.add_flag("--share-gpu", o.share_gpu,
               "with --device cuda: more ranks than GPUs on a node, rank with LOCAL_RANK i on GPU i % GPUs; NCCL "
               "then takes each rank for a host of its own and connects them over sockets (to try multi-process "
               "DDP on one GPU, not for speed)");
  app.add_option("--backend", o.backend,
                 "process group backend: auto (gloo for cpu, nccl for cuda), gloo, or nccl "
                 "(CUDA tensors over NCCL; host-side metrics still over gloo)")
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}))
      ->capture_default_str();
  load_plugins(argc, argv);
  const CLI::Validator sync_spec([](std::string& v) { return dist::sync_spec_problem(v); }, "SPEC");
  app.add_option("--sync", o.sync, sync_help())->check(sync_spec)->capture_default_str();
  // Bucket sizes as PyTorch's bucket_cap_mb: MiB, above 0 (apps/train_cifar/buckets.h).
  const CLI::Validator bucket_mb(bucket_flag_problem, "MiB");
  app.add_option(
         "--bucket-cap-mb", o.bucket_cap_mb,
         "--sync ddp: gradient bucket size in MiB (PyTorch's bucket_cap_mb; default DDL_BUCKET_CAP_MB, else 25)")
      ->check(bucket_mb);
  app.add_option("--first-bucket-mb", o.first_bucket_mb,
                 "--sync ddp: the first (last layers') bucket in MiB (default DDL_FIRST_BUCKET_MB, else 1)")
      ->check(bucket_mb);
  app.add_flag("--sync-bn", o.sync_bn,
               "BatchNorm layers use the batch statistics of every rank (SyncBatchNorm; docs/dist.md); no effect "
               "on one process");
  const CLI::Validator hook_spec([](std::string& v) { return dist::hooks::comm_hook_spec_problem(v); }, "HOOK");
  app.add_option("--comm-hook", o.comm_hook,
                 "with --sync ddp: how each gradient bucket is averaged: allreduce, fp16, bf16 (compressed) or "
                 "powersgd:RANK (low-rank, from step 10; docs/dist.md, \"Communication hooks\")")
      ->check(hook_spec)
      ->capture_default_str();
  app.add_flag("--uneven,--no-drop-last", o.uneven,
               "every training example once per epoch: no padding of the ranks' shares, so their batch counts may "
               "differ; needs --sync ddp, which then trains under a Join (docs/train_cifar.md)");
  app.add_option("--plugin", o.plugins,
                 "shared library of strategies to load first (repeatable; it defines extern \"C\" void "
                 "ddl_register_strategies(); docs/sync.md)");
  app.add_option("--log-every", o.log_every, "print loss, accuracy and time every N batches")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--eval-every", o.eval_every, "evaluate on the test set every N epochs")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--snapshot", o.snapshot,
                 "snapshot file (safetensors with JSON metadata): every rank resumes from it "
                 "when it exists; rank 0 rewrites it atomically as training goes");
  app.add_option("--snapshot-every", o.snapshot_every, "snapshot every N epochs")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--snapshot-every-steps", o.snapshot_every_steps, "also snapshot every N steps (0: off)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  app.add_option("--load", o.load,
                 "load model weights (safetensors: a --save file, or a --snapshot file's model) before training or "
                 "evaluating");
  app.add_flag("--allow-nonfinite", o.allow_nonfinite,
               "--load weights or resume a --snapshot even when they hold NaN or infinite values");
  app.add_option("--save", o.save, "save the final model weights (safetensors; rank 0)");
  app.add_flag("--eval-only", o.eval_only,
               "only evaluate the model on the test set: the --load weights, or the --snapshot's (which must exist)");
  app.add_option("--metrics", o.metrics,
                 "write per-worker metrics as JSON lines to FILE (rank r appends .rank<r> under ddlrun)");
  app.add_option("--train-samples", o.train_samples, "use only the first N training samples (synthetic: generate N)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  app.add_option("--test-samples", o.test_samples, "use only the first N test samples (synthetic: generate N)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  app.add_option("--target-accuracy", o.target_accuracy,
                 "report the time to reach this test accuracy, in percent (0-100, e.g. 85)")
      ->check(ddl::apps::FiniteRange(0.0, 100.0));
  app.add_flag("--stop-at-target", o.stop_at_target,
               "end training after the first test evaluation that reaches --target-accuracy (the schedule keeps its "
               "--epochs length)");
  app.add_option("--report", o.report,
                 "write an HTML report to FILE (curves, per-rank step times, bytes per operation, confusion matrix; "
                 "rank 0)");
  app.add_option("--trace", o.trace,
                 "record a timeline and write it to FILE as Chrome trace-event JSON (open in ui.perfetto.dev or "
                 "chrome://tracing); under ddlrun the ranks' traces are merged into FILE by rank 0 (docs/trace.md)");
  app.add_flag("!--no-progress", o.progress, "no progress bar even on a terminal");
  app.add_option("--crash-at-step", o.crash_at_step,
                 "fault injection: rank --crash-rank exits with status 3 at this global step unless it resumed from a "
                 "snapshot (to test --snapshot with ddlrun --max-restarts)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  app.add_option("--crash-rank", o.crash_rank, "the rank --crash-at-step ends")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--hang-at-step", o.hang_at_step,
                 "fault injection: rank --hang-rank stops itself with SIGSTOP at this global step (unless resumed), so "
                 "the others fail at --timeout naming it")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  app.add_option("--hang-rank", o.hang_rank, "the rank --hang-at-step stops")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the help, or the error naming the flag
    std::exit(code == 0 ? 0 : 2);
  }
  // The backend must carry the device's tensors: gloo moves CPU tensors, nccl CUDA ones.
  const char* mismatch = o.device == "cpu" && o.backend == "nccl"    ? "--backend nccl needs --device cuda"
                         : o.device == "cuda" && o.backend == "gloo" ? "--backend gloo works on CPU tensors; use "
                                                                       "--backend nccl (or auto) with --device cuda"
                                                                     : nullptr;
  if (mismatch) usage_error(mismatch);
  if (o.share_gpu && o.device != "cuda") usage_error("--share-gpu needs --device cuda");
  if (const std::string problem = data_dir_problem(o); !problem.empty()) usage_error(problem);
  if (const std::string problem = apply_bucket_flags(o); !problem.empty()) usage_error(problem);
  if (o.stop_at_target && o.target_accuracy <= 0) usage_error("--stop-at-target needs --target-accuracy");
  if (o.schedule == "onecycle" && o.warmup_epochs > 0)
    usage_error("--schedule onecycle has its own warm-up (30% of the steps); drop --warmup-epochs");
  if (o.nesterov && o.momentum <= 0) usage_error("--nesterov needs --momentum above 0");
  if (o.eval_only && !o.load.empty() && !o.snapshot.empty())
    usage_error("--eval-only evaluates either --load or --snapshot, not both");
  o.augment_set = aug->count() > 0;
  if (!o.augment_set) o.augment = o.dataset == "cifar10";
  // Accuracy is a percentage everywhere; a fraction is most likely the old unit.
  if (o.target_accuracy > 0 && o.target_accuracy <= 1)
    std::cerr << "train_cifar: warning: --target-accuracy " << o.target_accuracy << " means " << o.target_accuracy
              << " % (the flag takes a percentage); for " << o.target_accuracy * 100 << " % pass "
              << o.target_accuracy * 100 << "\n";
  return o;
}

void inject_fault(const TrainOptions& o, int64_t step, int rank, bool resumed) {
  if (resumed) return;
  if (o.crash_at_step > 0 && step == o.crash_at_step && rank == o.crash_rank) {
    std::cerr << "train_cifar: fault injection: rank " << rank << " exits with status 3 at step " << step << "\n";
    std::_Exit(3);
  }
  if (o.hang_at_step > 0 && step == o.hang_at_step && rank == o.hang_rank) {
    std::cerr << "train_cifar: fault injection: rank " << rank << " stops itself (SIGSTOP) at step " << step << "\n";
    std::raise(SIGSTOP);  // the launcher's SIGKILL still ends it (signal(7))
  }
}

}  // namespace ddl::apps
