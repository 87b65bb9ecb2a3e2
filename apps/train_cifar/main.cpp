// train_cifar: data-parallel training of a VGG (or ResNet-18/MLP) on CIFAR-10,
// Fashion-MNIST, MNIST, an image folder or synthetic data. Run alone, or as
//   ddlrun --nproc 2 build/apps/train_cifar --dataset fashion-mnist --sync ddp
// Each rank trains on its DistributedSampler shard; --sync picks how replicas
// stay consistent (dist/sync/). Rank 0 prints the summary and writes files.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "apps/train_cifar/datasets.h"
#include "apps/train_cifar/evaluate.h"
#include "apps/train_cifar/options.h"
#include "apps/train_cifar/run_report.h"
#include "apps/train_cifar/step.h"
#include "apps/train_cifar/training.h"
#include "apps/train_cifar/uneven_sampler.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
#include <ddl/ft/elastic_resume.h>
#include <ddl/ft/ft.h>

using namespace ddl;

int main(int argc, char** argv) try {
  const apps::TrainOptions o = apps::parse_options(argc, argv);
  if (o.threads > 0) set_num_threads(o.threads);
  const dist::LaunchEnv env = dist::read_launch_env();
  const Device device = apps::training_device(o, env.local_rank);  // cpu, or cuda:LOCAL_RANK
  set_current_device(device);        // before any allocation: no context on cuda:0 for other ranks
  apps::prepare_shared_gpu(o, env);  // --share-gpu: before NCCL starts

  // 1. The process group, when launched by ddlrun/srun/mpirun with WORLD_SIZE > 1:
  //    gloo for CPU tensors, nccl for CUDA tensors.
  std::shared_ptr<dist::ProcessGroup> group;
  if (env.world_size > 1)
    group = dist::init_process_group(apps::process_group_backend(o), apps::process_group_options(o));
  // Reporting, evaluation and resume talk on a group of their own: See Note [Control group].
  std::shared_ptr<dist::ProcessGroup> control = group ? dist::new_group_beside_default("control") : nullptr;
  const int rank = group ? group->rank() : 0, world = group ? group->size() : 1;
  DDL_CHECK(o.crash_rank < world && o.hang_rank < world, "train_cifar: --crash-rank ", o.crash_rank, " / --hang-rank ",
            o.hang_rank, " must name a rank of this ", world, "-rank job");
  // --trace: record from here; at the end every rank sends its events to rank 0 (docs/trace.md).
  if (!o.trace.empty()) dist::start_trace(o.trace);
  trace::set_thread_name("compute");
  auto write_trace = [&] {
    if (o.trace.empty()) return;
    dist::write_trace(o.trace);
    if (rank == 0) std::cout << "trace: " << o.trace << " (open in ui.perfetto.dev or chrome://tracing)" << std::endl;
  };

  // 2. Data: this rank's shard of the training set, a contiguous slice of the test set.
  const apps::DataSplits splits = apps::make_datasets(o);
  std::shared_ptr<data::Sampler> sampler =
      o.uneven ? std::shared_ptr<data::Sampler>(
                     std::make_shared<apps::UnevenSampler>(splits.train_size, world, rank, o.seed))
               : std::make_shared<data::DistributedSampler>(splits.train_size, world, rank, true, o.seed);
  // Page-locked batches on a GPU: the copy to the device is then an asynchronous DMA.
  data::DataLoader train_loader(splits.train, data::DataLoaderOptions(o.batch_size)
                                                  .sampler(sampler)
                                                  .workers(o.loader_workers)
                                                  .pin_memory(device.is_cuda())
                                                  .seed(o.seed));

  // 3. Model, synchronisation strategy, optimizer, schedule. Same seed on every rank;
  //    the strategy also broadcasts rank 0's weights.
  manual_seed(o.seed);
  std::shared_ptr<nn::Module> model = nn::make_model(o.model, splits.num_classes, splits.in_channels);
  if (!o.load.empty()) ft::load_weights(o.load, *model, o.allow_nonfinite);
  if (o.eval_only && !o.snapshot.empty()) {  // evaluate a snapshot's model, which must exist
    DDL_CHECK(std::filesystem::is_regular_file(o.snapshot), "--eval-only --snapshot ", o.snapshot,
              ": no such snapshot file to evaluate");
    ft::load_weights(o.snapshot, *model);
  }
  model->to(device);
  apps::RunReport report(o, splits, group.get(), control.get(), *model, train_loader.size(), device);
  if (o.eval_only) {
    report.final_evaluation(apps::evaluate(*model, splits.test, splits.test_size, splits.num_classes, o.batch_size,
                                           o.loader_workers, control.get()));
    write_trace();
    apps::shut_down(group, control);
    report.write_report();
    return 0;
  }
  apps::maybe_sync_batchnorm(o, model, group);
  auto strategy = group ? dist::make_sync_strategy(o.sync, model, group) : nullptr;
  if (strategy) report.strategy_made(*strategy);
  nn::Module& net = strategy ? strategy->model() : *model;
  // --comm-hook and --uneven reach DDP itself (dist/hooks/).
  auto* ddp = dynamic_cast<dist::DistributedDataParallel*>(&net);
  DDL_CHECK(ddp || !group || (o.comm_hook == "allreduce" && !o.uneven),
            "train_cifar: --comm-hook and --uneven need --sync ddp, got --sync ", o.sync);
  if (ddp && o.comm_hook != "allreduce") ddp->register_comm_hook(dist::hooks::make_comm_hook(o.comm_hook));
  optim::SGD opt(model->parameters(),
                 optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay).nesterov(o.nesterov));
  const int64_t steps_per_epoch = train_loader.size(), total_steps = o.epochs * steps_per_epoch;
  auto schedule = apps::make_schedule(opt, o, steps_per_epoch, total_steps);

  // 4. Resume from a snapshot when one exists. Each node may hold its own copy (or none):
  //    the ranks agree on rank 0's before training, or all stop (docs/fault_tolerance.md).
  ft::State state{.model = model.get(),
                  .optimizer = &opt,
                  .position = {.seed = o.seed, .world_size = world, .batch_size = o.batch_size},
                  .strategy = strategy.get()};
  const ft::ResumeOutcome resume = ft::resume(
      o.snapshot, state, control.get(),
      {.allow_nonfinite = o.allow_nonfinite, .any_world_size = ft::elastic_run() || ft::sharded_sync(o.sync)});
  ft::Position& pos = state.position;
  const bool resumed = resume.resumed;
  if (resumed) {
    // An elastic round at another world size (docs/dist.md, "Elastic jobs").
    const std::string elastic = ft::adapt_to_world(pos, world, steps_per_epoch, o.sync, o.batch_size);
    schedule->set_step(pos.global_step);
    report.resumed(resume.source, pos.epoch, pos.step_in_epoch, pos.global_step,
                   resume.note + (resume.note.empty() || elastic.empty() ? "" : "\n") + elastic);
  }

  // 5. The training loop.
  CrossEntropyOptions ce;
  ce.label_smoothing = o.label_smoothing;
  const apps::StepParts parts{
      .net = net, .opt = opt, .strategy = strategy.get(), .timer = report.timer(), .device = device, .loss = ce};
  for (int64_t epoch = pos.epoch; epoch < o.epochs; ++epoch) {
    train_loader.set_epoch(epoch);
    report.start_epoch(epoch);
    net.train();
    // Resuming mid-epoch: the epoch's first pos.step_in_epoch batches are done; skip them.
    auto batch = train_loader.begin();
    int64_t step = 0;  // this epoch's batch index
    for (; step < pos.step_in_epoch && batch != train_loader.end(); ++step) ++batch;
    report.start_at_step(step);
    // Ranks with fewer batches shadow the others' all-reduces until the last one is done.
    std::optional<dist::Join> join;
    if (o.uneven && ddp) join.emplace(std::vector<dist::Joinable*>{ddp});
    for (; batch != train_loader.end(); ++batch, ++step) {
      const apps::StepResult r = apps::train_step(parts, *batch);
      schedule->step();
      report.end_step(step, r.loss.data(), r.logits.data(), r.target, r.lr, r.comm);  // reads the loss when shown
      ++pos.global_step;
      apps::after_step(o, state, control.get(), epoch, step + 1, resumed);  // fault hooks, --snapshot-every-steps
    }
    if (join) join->join();
    pos.step_in_epoch = 0;
    report.end_epoch();
    bool reached = false;  // --stop-at-target: the job's accuracy, the same on every rank
    if ((epoch + 1) % o.eval_every == 0 || epoch + 1 == o.epochs) {
      if (strategy) strategy->gather_full_model();        // fsdp: the whole weights, into *model
      if (control) apps::sync_buffers(*model, *control);  // evaluate with rank 0's BatchNorm statistics
      const apps::EvalResult r = apps::evaluate(*model, splits.test, splits.test_size, splits.num_classes, o.batch_size,
                                                o.loader_workers, control.get());
      report.epoch_evaluation(r);
      reached = o.stop_at_target && 100 * r.accuracy >= o.target_accuracy;
    }
    if (!o.snapshot.empty() && ((epoch + 1) % o.snapshot_every == 0 || epoch + 1 == o.epochs || reached)) {
      pos.epoch = epoch + 1, pos.step_in_epoch = 0;
      ft::save(o.snapshot, state, control.get());
    }
    if (reached) break;
  }

  // 6. Results: classification report, per-worker metrics, the final weights; the HTML
  //    report last, so that a failure to write it loses nothing else.
  if (strategy) strategy->gather_full_model();
  report.final_evaluation(apps::evaluate(*model, splits.test, splits.test_size, splits.num_classes, o.batch_size,
                                         o.loader_workers, control.get()));
  if (!o.save.empty() && rank == 0) nn::save_state(*model, o.save);
  write_trace();
  apps::shut_down(group, control);
  report.write_report();
  return 0;
} catch (const std::exception& e) {
  std::cerr << "train_cifar: error: " << e.what() << "\n";
  return 1;
}
