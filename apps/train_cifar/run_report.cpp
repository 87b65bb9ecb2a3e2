// train_cifar's output and metrics.
#include "apps/train_cifar/run_report.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "dist/env.h"
#include "dist/gloo/process_group_gloo.h"
#include "dist/process_group_auto.h"
#include "tensor/ops.h"

namespace ddl::apps {

namespace {
std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string indented(const std::string& lines) {
  std::string out;
  std::istringstream in(lines);
  for (std::string line; std::getline(in, line);) out += "  " + line + "\n";
  return out;
}

// "process group gloo (transport: tcp; all_reduce through shared memory, ...)": the gloo
// group's transport explains why the host network counters see few bytes for
// all_reduce-based strategies. With --device cuda the group is a ProcessGroupAuto whose
// CPU side is gloo.
std::string describe_group(dist::ProcessGroup& group) {
  dist::ProcessGroup* cpu = &group;
  if (auto* both = dynamic_cast<dist::ProcessGroupAuto*>(&group)) cpu = &both->cpu_group();
  auto* gloo = dynamic_cast<dist::ProcessGroupGloo*>(cpu);
  if (!gloo) return "process group " + group.backend();
  std::string out =
      "process group " + group.backend() + " (" + (cpu == &group ? "" : "gloo ") + "transport: " + gloo->transport();
  if (!gloo->shm_status().empty())
    out += "; no shared memory: " + gloo->shm_status();
  else if (gloo->transport() != "tcp")
    out += ", which /proc/net/dev does not see";
  return out + ")";
}
}  // namespace

RunReport::RunReport(const TrainOptions& o, const DataSplits& splits, dist::ProcessGroup* group,
                     const nn::Module& model, int64_t batches_per_epoch)
    : o_(o),
      splits_(splits),
      group_(group),
      rank_(group ? group->rank() : 0),
      world_(group ? group->size() : 1),
      batches_per_epoch_(batches_per_epoch),
      start_(std::chrono::steady_clock::now()),
      convergence_(o.target_accuracy) {
  // ddlrun (which sets DDL_RESTART_COUNT) already prefixes every line with the rank.
  if (!std::getenv("DDL_RESTART_COUNT"))
    prefix_ = "[rank " + std::to_string(rank_) + "/" + std::to_string(world_) + "] ";
  restarts_ = dist::read_launch_env().restart_count;
  if (!o.metrics.empty()) {
    // A run that continues an earlier one (restarted by ddlrun --max-restarts, or resuming
    // from a snapshot) keeps that run's lines and appends its own after one marker line,
    // where "time" starts again from 0: "resume" (written by resumed()) when training will
    // resume from the snapshot, else "restart" (training starts over).
    const bool snapshot = !o.eval_only && !o.snapshot.empty() && std::filesystem::exists(o.snapshot);
    const bool continues = restarts_ > 0 || snapshot;
    log_ = std::make_unique<report::MetricsLog>(report::metrics_path_for_rank(o.metrics, rank_, world_), rank_, world_,
                                                continues);
    // Without a file here this rank may still resume from rank 0's (resume.h): then
    // resumed() writes the marker, else start_epoch() writes "restart".
    restart_pending_ = continues && !snapshot;
    if (restart_pending_ && (o.eval_only || o.snapshot.empty() || world_ == 1)) write_restart_marker();
  }
  // The run's clock (convergence_s, wall_s) starts with the log's, not before it: the
  // time to a target accuracy is then never later than the "time" of that eval line.
  start_ = std::chrono::steady_clock::now();
  std::ostringstream os;
  os << "model " << o.model << " (" << model.parameter_count() << " parameters), dataset " << o.dataset << " ("
     << splits.train_size << " train / " << splits.test_size << " test), device " << o.device << ", world size "
     << world_ << ", sync " << (world_ > 1 ? o.sync : std::string("none")) << ", batch " << o.batch_size
     << " per worker, " << batches_per_epoch << " batches per epoch, " << get_num_threads() << " threads, augmentation "
     << (o.augment ? "on (random crop, horizontal flip)" : "off");
  say(os.str());
  if (group_) say(describe_group(*group_));
  // Under ddlrun --hosts: which emulated host this rank runs on, and its link (docs/cluster.md).
  if (const char* host = std::getenv("DDL_HOST")) {
    const char* link = std::getenv("DDL_HOST_LINK");
    say(std::string("emulated host ") + host + ", link " + (link ? link : "?"));
  }
}

void RunReport::say(const std::string& line) {
  if (bar_)
    bar_->println(prefix_ + line);
  else
    std::cout << prefix_ << line << std::endl;
}

void RunReport::say_lines(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) say(line);
}

void RunReport::resumed(const std::string& snapshot, int64_t epoch, int64_t step_in_epoch, int64_t global_step,
                        const std::string& note) {
  if (lead() && !note.empty()) say(note);
  restart_pending_ = false;  // the "resume" line below marks where this run goes on
  say("resumed from " + snapshot + " at epoch " + std::to_string(epoch + 1) + ", step " +
      std::to_string(step_in_epoch));
  if (log_)
    log_->write("resume", {{"restart_count", restarts_},
                           {"snapshot", snapshot},
                           {"epoch", epoch},
                           {"step_in_epoch", step_in_epoch},
                           {"global_step", global_step}});
}

void RunReport::write_restart_marker() {
  if (restart_pending_) log_->write("restart", {{"restart_count", restarts_}});
  restart_pending_ = false;
}

void RunReport::start_epoch(int64_t epoch) {
  write_restart_marker();
  epoch_ = epoch;
  loss_sum_ = 0;
  seen_ = correct_ = 0;
  timer_.begin_epoch();
  timer_.start(report::Phase::Data);
  if (o_.progress && lead())
    bar_ = std::make_unique<report::ProgressBar>(batches_per_epoch_, "epoch " + std::to_string(epoch + 1));
}

void RunReport::end_step(int64_t step, double loss, const Tensor& logits, const Tensor& target, double lr,
                         const dist::StepComm& comm) {
  // Waiting for the network is comm_wait wherever it happened: ddp's buffer broadcast in
  // forward and its last buckets in backward, param-server's weight pull in step().
  timer_.move_time(report::Phase::Forward, report::Phase::CommWait, comm.forward_ms / 1e3);
  timer_.move_time(report::Phase::Backward, report::Phase::CommWait, comm.backward_ms / 1e3);
  timer_.move_time(report::Phase::Optimizer, report::Phase::CommWait, comm.step_ms / 1e3);
  const report::StepTimes t = timer_.end_step();
  const int64_t n = target.numel();
  const int64_t ok = static_cast<int64_t>(sum(eq(argmax(logits, 1), target).to(DType::Int64)).item());
  loss_sum_ += loss * static_cast<double>(n);
  seen_ += n;
  correct_ += ok;
  if (log_) log_->step(epoch_, step, t, {{"loss", loss}, {"accuracy", double(ok) / double(n)}, {"lr", lr}});
  if (bar_) bar_->update(step + 1, fmt("loss %.3f", loss));
  if (step % o_.log_every == 0 || step + 1 == batches_per_epoch_)
    say(fmt("epoch %.0f batch %4.0f: loss %.4f, batch accuracy %.3f", double(epoch_ + 1), double(step), loss,
            double(ok) / double(n)) +
        fmt(", batch time %.3f s (comm %.1f ms), lr %.4g", t.total_s, t.phase(report::Phase::CommWait) * 1e3, lr));
  // The wait for the next batch is that batch's data time, so its step opens now.
  timer_.start(report::Phase::Data);
}

void RunReport::end_epoch() {
  timer_.discard_step();  // the data wait that found the epoch over belongs to no batch
  const report::EpochTimes e = timer_.end_epoch();
  last_train_loss_ = loss_sum_ / double(std::max<int64_t>(seen_, 1));
  bar_.reset();
  say(fmt("epoch %.0f: train loss %.4f, train accuracy %.4f, ", double(epoch_ + 1),
          loss_sum_ / double(std::max<int64_t>(seen_, 1)), double(correct_) / double(std::max<int64_t>(seen_, 1))) +
      fmt("avg batch time %.3f s (excluding the first), epoch time %.1f s", e.mean.total_s, e.wall_s));
  say(fmt("  per step: data %.1f ms, forward %.1f ms, backward %.1f ms, comm wait %.1f ms",
          e.mean.phase(report::Phase::Data) * 1e3, e.mean.phase(report::Phase::Forward) * 1e3,
          e.mean.phase(report::Phase::Backward) * 1e3, e.mean.phase(report::Phase::CommWait) * 1e3) +
      fmt(", optimizer %.1f ms", e.mean.phase(report::Phase::Optimizer) * 1e3));
  if (log_) {
    log_->epoch(epoch_, e, {{"train_loss", loss_sum_ / double(std::max<int64_t>(seen_, 1))}});
    for (const auto& s : sampler_.take_new_samples()) log_->sample(s);
  }
}

void RunReport::epoch_evaluation(const EvalResult& r) {
  last_accuracy_ = r.accuracy;
  convergence_.record(seconds_since(start_), r.accuracy);
  if (log_) log_->write("eval", {{"epoch", epoch_}, {"test_loss", r.loss}, {"test_accuracy", r.accuracy}});
  if (lead())
    say(fmt("epoch %.0f: test loss %.4f, test accuracy %.4f (%.0f images)", double(epoch_ + 1), r.loss, r.accuracy,
            double(r.samples)));
}

void RunReport::final_evaluation(const EvalResult& r) {
  last_accuracy_ = r.accuracy;
  report::ConfusionMatrix cm(static_cast<int>(splits_.num_classes), splits_.class_names);
  cm.add_counts(r.confusion);
  if (lead()) {
    say_lines(fmt("test loss %.4f, test accuracy %.4f on %.0f images\n", r.loss, r.accuracy, double(r.samples)) +
              report::classification_report(cm).to_string() +
              "\nconfusion matrix (rows: true class, columns: predicted)\n" + report::format_confusion_matrix(cm));
  }
  const report::ResourceSummary res = sampler_.summary();
  const double wall = seconds_since(start_);
  const dist::CommStats stats = group_ ? group_->stats() : dist::CommStats{};
  if (log_)
    log_->summary(res, {{"test_accuracy", r.accuracy},
                        {"test_loss", r.loss},
                        {"train_loss", last_train_loss_},
                        {"convergence_s", convergence_.time_s()},
                        {"wall_s", wall},
                        {"pg_bytes_sent", group_ ? stats.bytes_sent() : 0},
                        {"pg_bytes_received", group_ ? stats.bytes_received() : 0},
                        {"pg_ops", report::to_json(stats)},
                        {"steps", report::to_json(timer_.run())}});
  const report::RankSummary mine =
      report::make_rank_summary(res, timer_.run(), group_ ? &stats : nullptr, convergence_.time_s(), r.accuracy, wall);
  std::ostringstream table;
  report::print_rank_table(mine, group_, table);  // collective; only rank 0's stream gets the table
  if (!lead()) return;
  say_lines("\n" + table.str());
  if (group_) say_lines("rank 0's process-group traffic by operation:\n" + indented(stats.summary()));
}

}  // namespace ddl::apps
