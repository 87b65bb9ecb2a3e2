// train_cifar's output and metrics.
#include "apps/train_cifar/run_report.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "apps/train_cifar/buckets.h"
#include "apps/train_cifar/run_report_util.h"
#include <ddl/dist/ddp/ddp.h>
#include <ddl/dist/env.h>
#include <ddl/dist/gloo/process_group_gloo.h>
#include <ddl/dist/hier/hierarchical_group.h>
#include <ddl/dist/process_group_auto.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cpu/cpu_level.h>
#include <ddl/tensor/ops.h>

namespace ddl::apps {

namespace {
using run_report_detail::fmt;
using run_report_detail::pct;
using run_report_detail::seconds_since;

// Note [Slowest rank]
// The progress bar and the step lines show the slowest rank's step time, which only the
// other ranks know. Every kSlowestEvery steps each rank all-reduces (max) its step time
// so far (all but the exchange itself): one float64, after the strategy's own
// collectives, on the same steps everywhere (the schedule depends on the step count
// alone, never on the rank or its terminal), so the collective sequence stays valid.
// The exchange runs inside the step, so its wait is in that step's time (as "other",
// not comm_wait, which stays the strategy's); it runs on the control group, so its bytes
// are not in the counters the report prints as the strategy's traffic (Note [Control
// group] in run_report.h). On a GPU the host only queues a step, so its
// host time says nothing: an exchange step there first waits for its own GPU work (one
// read), and each rank sends its mean wall time per step since the last exchange (or the
// epoch's start), GPU work included.
// The same all-reduce carries every rank's pace (report/straggler.h): a sum of world
// slots of a few float64s, each rank filling its own (the host names ride on the first),
// so the job learns which rank is slowest, whether compute or waiting for peers fills its
// steps, and whose link is busiest, with no collective of its own.
constexpr int64_t kSlowestEvery = 10;

// Note [Deferred reads]
// Reading a value from the GPU waits for all the work queued before it, so a read per
// step (the loss, the number correct) keeps the host from queueing the next step while
// the GPU runs this one. Each step therefore leaves its loss and correct count on the
// device as one [2] float64, and the host reads all the steps queued so far in one copy
// only when something shows a step: the --metrics line (every step), a progress bar that
// draws (every step), a --log-every line, the epoch's last step; and at the epoch's end. The
// GPU-clock step timer is resolved right after that read (its events are then reached).
// Values are the same as reading each step: float32 to float64 and int64 to float64 are
// exact, and the sums are taken on the host in the same order. On the CPU every step is
// read at once (no queue to lose), so its output is unchanged.

// "process group gloo (transport: tcp; all_reduce through shared memory, ...)": the gloo
// group's transport explains why the host network counters see few bytes for
// all_reduce-based strategies. With --device cuda the group is a ProcessGroupAuto whose
// CPU side is gloo.
std::string describe_group(dist::ProcessGroup& group) {
  dist::ProcessGroup* cpu = &group;
  if (auto* both = dynamic_cast<dist::ProcessGroupAuto*>(&group)) cpu = &both->cpu_group();
  if (auto* hier = dynamic_cast<dist::ProcessGroupHierarchical*>(cpu))
    return "process group " + group.backend() + " (" + hier->describe() + ")";
  auto* gloo = dynamic_cast<dist::ProcessGroupGloo*>(cpu);
  if (!gloo) return "process group " + group.backend();
  std::string out =
      "process group " + group.backend() + " (" + (cpu == &group ? "" : "gloo ") + "transport: " + gloo->transport();
  // Not using shared memory is the normal case across hosts: say why as information, and
  // only a fault as an error (See Note [Why not shared memory] in dist/transport/shm_segment.cpp).
  if (!gloo->shm_status().empty())
    out += (gloo->shm_failed() ? "; shared memory error, all_reduce over tcp: " : "; shared memory not used: ") +
           gloo->shm_status();
  else if (gloo->transport() != "tcp")
    out += ", which /proc/net/dev does not see";
  return out + ")";
}
}  // namespace

RunReport::RunReport(const TrainOptions& o, const DataSplits& splits, dist::ProcessGroup* group,
                     dist::ProcessGroup* control, const nn::Module& model, int64_t batches_per_epoch, Device device)
    : o_(o),
      splits_(splits),
      model_(model),
      group_(group),
      control_(control ? control : group),
      rank_(group ? group->rank() : 0),
      world_(group ? group->size() : 1),
      batches_per_epoch_(batches_per_epoch),
      start_(std::chrono::steady_clock::now()),
      timer_(device.is_cuda() ? report::StepTimer(device) : report::StepTimer()),
      convergence_(o.target_accuracy),
      history_(batches_per_epoch) {
  // Not with --uneven: ranks run different numbers of steps, so a per-step exchange would not line up.
  exchanging_ = world_ > 1 && !o.uneven && (o.progress || !o.metrics.empty());
  if (exchanging_) pace_ = std::make_unique<LivePace>(group, rank_, world_);
  // A path the report cannot be written to fails now, not after the training.
  if (lead() && !o.report.empty()) report::HtmlReport::check_writable(o.report);
  // ddlrun (which sets DDL_RESTART_COUNT) already prefixes every line with the rank.
  if (!std::getenv("DDL_RESTART_COUNT"))
    prefix_ = "[rank " + std::to_string(rank_) + "/" + std::to_string(world_) + "] ";
  restarts_ = dist::read_launch_env().restart_count;
  if (!o.metrics.empty()) {
    // A run that continues an earlier one (restarted by ddlrun --max-restarts, or resuming
    // from a snapshot) keeps that run's lines and appends its own after one marker line,
    // where "time_s" starts again from 0: "resume" (written by resumed()) when training will
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
  // time to a target accuracy is then never later than the "time_s" of that eval line.
  start_ = std::chrono::steady_clock::now();
  std::ostringstream os;
  os << "model " << o.model << " (" << model.parameter_count() << " parameters), dataset " << o.dataset << " ("
     << splits.train_size << " train / " << splits.test_size << " test), device " << o.device << ", world size "
     << world_ << ", sync " << (world_ > 1 ? o.sync : std::string("none")) << ", batch " << o.batch_size
     << " per worker, " << batches_per_epoch << " batches per epoch, " << get_num_threads() << " threads, augmentation "
     << (o.augment ? "on (random crop, horizontal flip)" : "off");
  say(os.str());
  if (!device.is_cuda()) say("CPU kernels: " + cpu::cpu_kernels_summary());
  // See Note [Device clock] in report/step_timer.cpp.
  if (device.is_cuda())
    say(std::string("step times are GPU time between the phase boundaries (CUDA events on the training stream)") +
        (world_ > 1 ? "; comm wait is the GPU's wait in the strategy's steps after backward and after the optimizer "
                      "(ddp's all-reduce overlaps backward, and its wait for the last buckets counts as backward)"
                    : ""));
  if (group_) say(describe_group(*group_));
  // Under ddlrun --hosts: which emulated host this rank runs on, and its link (docs/cluster.md).
  if (const char* host = std::getenv("DDL_HOST")) {
    const char* link = std::getenv("DDL_HOST_LINK");
    say(std::string("emulated host ") + host + ", link " + (link ? link : "?"));
  }
}

void RunReport::strategy_made(dist::SyncStrategy& strategy) {
  strategy_ = &strategy;
  const auto* ddp = dynamic_cast<const dist::DistributedDataParallel*>(&strategy.model());
  if (!ddp) return;
  const std::vector<int64_t>& bytes = ddp->stats().bucket_bytes;
  say(describe_buckets(o_) + ": " + bucket_layout(bytes));
  if (log_) log_->write("ddp_buckets", {{"bucket_bytes", bytes}});
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
  epoch_start_ = step_start_ = window_start_ = std::chrono::steady_clock::now();
  window_steps_ = 0;
  timer_.begin_epoch();
  timer_.start(report::Phase::Data);
  if (o_.progress && lead())
    bar_ = std::make_unique<report::ProgressBar>(batches_per_epoch_, "epoch " + std::to_string(epoch + 1));
}

void RunReport::start_at_step(int64_t step) {
  if (step == 0) return;
  timer_.discard_step();  // the wait for skipped batches is no step's data time
  epoch_start_ = step_start_ = window_start_ = std::chrono::steady_clock::now();
  window_steps_ = 0;
  timer_.start(report::Phase::Data);
  if (bar_) bar_->start_at(step);
}

void RunReport::end_step(int64_t step, const Tensor& loss, const Tensor& logits, const Tensor& target, double lr,
                         const dist::StepComm& comm) {
  // Waiting for the network is comm_wait wherever it happened: ddp's buffer broadcast in
  // forward and its last buckets in backward, param-server's weight pull in step(). These
  // are host times: on a GPU clock the waits are GPU time in their own phases instead.
  if (!timer_.device_clock()) {
    timer_.move_time(report::Phase::Forward, report::Phase::CommWait, comm.forward_ms / 1e3);
    timer_.move_time(report::Phase::Backward, report::Phase::CommWait, comm.backward_ms / 1e3);
    timer_.move_time(report::Phase::Optimizer, report::Phase::CommWait, comm.step_ms / 1e3);
  }
  timer_.stop();  // from here to end_step: "other" (the accuracy, the exchange)
  const Tensor correct = sum(eq(argmax(logits, 1), target).to(DType::Int64));
  const Tensor values = cat({loss.to(DType::Float64).reshape({1}), correct.to(DType::Float64).reshape({1})});
  queued_.push_back({step, target.numel(), lr, std::numeric_limits<double>::quiet_NaN(), nullptr, values});
  // step_start_ is taken just before the timer's own step start: the time sent is never
  // less than the sum of this step's phases. See Note [Slowest rank].
  double step_s = seconds_since(step_start_);
  ++window_steps_;
  if (timer_.device_clock() && exchanging_ && (steps_done_ + 1) % kSlowestEvery == 0) {
    (void)to_vector<double>(values);  // waits for this step's GPU work
    step_s = seconds_since(window_start_) / static_cast<double>(window_steps_);
    window_start_ = std::chrono::steady_clock::now();
    window_steps_ = 0;
  }
  queued_.back().slowest = exchange_slowest(step_s);
  const report::StepTimes t = timer_.end_step();
  const bool shown = step % o_.log_every == 0 || step + 1 == batches_per_epoch_;
  const bool drawn = bar_ && bar_->enabled();                           // a bar that never draws needs no value
  if (!timer_.device_clock() || log_ || drawn || shown) read_steps(t);  // See Note [Deferred reads]
  // The wait for the next batch is that batch's data time, so its step opens now.
  step_start_ = std::chrono::steady_clock::now();
  timer_.start(report::Phase::Data);
}

void RunReport::read_steps(const report::StepTimes& host_times) {
  if (queued_.empty()) return;
  std::vector<Tensor> rows;
  for (const QueuedStep& q : queued_) rows.push_back(q.values);
  const std::vector<double> v = to_vector<double>(stack(rows).to(Device::cpu()));  // the one wait for the GPU
  const std::vector<report::StepTimes> times =
      timer_.device_clock() ? timer_.resolve() : std::vector<report::StepTimes>{host_times};
  for (size_t i = 0; i < queued_.size(); ++i) {
    const QueuedStep& q = queued_[i];
    const double loss = v[2 * i];
    const int64_t n = q.images, ok = std::llround(v[2 * i + 1]);
    const report::StepTimes t = i < times.size() ? times[i] : report::StepTimes{};
    loss_sum_ += loss * static_cast<double>(n);
    seen_ += n;
    correct_ += ok;
    if (pace_) pace_->add_step(t);
    if (log_) {
      nlohmann::json extra = {{"loss", loss}, {"accuracy_pct", pct(ok, n)}, {"lr", q.lr}, {"images", n}};
      if (std::isfinite(q.slowest)) extra["slowest_rank_step_s"] = q.slowest;
      if (q.pace.is_object()) extra.update(q.pace);
      log_->step(epoch_, q.step, t, std::move(extra));
    }
    if (lead()) history_.step(epoch_, q.step, loss, pct(ok, n), q.lr);
    if (bar_) {
      // Every rank trains on an equal shard (DistributedSampler), so the job's rate is world x ours.
      const double rate = double(seen_) * world_ / std::max(seconds_since(epoch_start_), 1e-9);
      const std::string pace = pace_ ? pace_->status() : "";
      bar_->update(q.step + 1, report::format_train_status(loss, rate, slowest_s_) + (pace.empty() ? "" : "; " + pace));
    }
    if (q.step % o_.log_every == 0 || q.step + 1 == batches_per_epoch_)
      say(fmt("epoch %.0f batch %4.0f: loss %.4f, batch accuracy %.2f%%", double(epoch_ + 1), double(q.step), loss,
              pct(ok, n)) +
          fmt(", batch time %.3f s (comm %.1f ms), lr %.4g", t.total_s, t.phase(report::Phase::CommWait) * 1e3, q.lr) +
          (lead() && pace_ && pace_->ready() ? "; " + pace_->sentence() : ""));
  }
  queued_.clear();
}

double RunReport::exchange_slowest(double step_s) {
  if (!exchanging_ || ++steps_done_ % kSlowestEvery != 0) return std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> mine = pace_->outgoing(step_s);
  Tensor t = from_vector(mine, Shape{static_cast<int64_t>(mine.size())});
  own_all_reduce(t, dist::ReduceOp::Sum, exchange_);
  pace_->incoming(to_vector<double>(t));
  const nlohmann::json pace = pace_->json();
  queued_.back().pace = {{"slowest_rank", pace["slowest_rank"]}, {"slowest_host", pace["slowest_host"]}};
  if (log_) {
    nlohmann::json line = pace;
    line["epoch"] = epoch_, line["step"] = queued_.back().step;
    log_->write("pace", std::move(line));
  }
  return slowest_s_ = pace_->slowest_step_s();
}

void RunReport::own_all_reduce(Tensor& t, dist::ReduceOp op, OwnCollective& ours) {
  // On the control group: its counters move only with the report's and evaluation's calls.
  const dist::OpStats before = control_->stats()[dist::OpKind::AllReduce];
  const auto t0 = std::chrono::steady_clock::now();
  control_->all_reduce(t, op);
  ours.time_s += seconds_since(t0);
  const dist::OpStats after = control_->stats()[dist::OpKind::AllReduce];
  ours.stats.calls += after.calls - before.calls;
  ours.stats.bytes_sent += after.bytes_sent - before.bytes_sent;
  ours.stats.bytes_received += after.bytes_received - before.bytes_received;
}

void RunReport::end_epoch() {
  timer_.discard_step();  // the data wait that found the epoch over belongs to no batch
  read_steps({});         // steps still queued when the loader ended early
  const report::EpochTimes e = timer_.end_epoch();
  // The job's train loss and accuracy, not rank 0's shard: every rank ends each epoch
  // here, so the sums' all_reduce lines up.
  if (control_ && world_ > 1) {
    Tensor sums = from_vector(std::vector<double>{loss_sum_, double(seen_), double(correct_)}, Shape{3});
    own_all_reduce(sums, dist::ReduceOp::Sum, totals_);
    const std::vector<double> v = to_vector<double>(sums);
    loss_sum_ = v[0], seen_ = std::llround(v[1]), correct_ = std::llround(v[2]);
  }
  last_train_loss_ = loss_sum_ / double(std::max<int64_t>(seen_, 1));
  last_train_accuracy_ = pct(correct_, seen_);
  bar_.reset();
  say(fmt("epoch %.0f: train loss %.4f, train accuracy %.2f%%, ", double(epoch_ + 1), last_train_loss_,
          last_train_accuracy_) +
      fmt("avg batch time %.3f s (excluding the first), epoch time %.1f s", e.mean.total_s, e.wall_s));
  say(fmt("  per step: data %.1f ms, forward %.1f ms, backward %.1f ms, comm wait %.1f ms",
          e.mean.phase(report::Phase::Data) * 1e3, e.mean.phase(report::Phase::Forward) * 1e3,
          e.mean.phase(report::Phase::Backward) * 1e3, e.mean.phase(report::Phase::CommWait) * 1e3) +
      fmt(", optimizer %.1f ms", e.mean.phase(report::Phase::Optimizer) * 1e3));
  if (log_) {
    log_->epoch(epoch_, e, {{"train_loss", last_train_loss_}, {"train_accuracy_pct", last_train_accuracy_}});
    for (const auto& s : sampler_.take_new_samples()) log_->sample(s);
  }
  if (lead()) history_.epoch(epoch_, last_train_loss_, last_train_accuracy_);
}

}  // namespace ddl::apps
