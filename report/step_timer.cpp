// StepTimer: a phase clock per step and running sums per epoch and per run. Every step
// is added to "all"; steps after an epoch's first also to "later", which means use.
#include "report/step_timer.h"

#include <algorithm>

#include "trace/trace.h"

namespace ddl::report {
namespace {

void accumulate(StepTimes& into, const StepTimes& s) {
  for (int i = 0; i < kNumPhases; ++i) into.phase_s[i] += s.phase_s[i];
  into.total_s += s.total_s;
}

StepTimes divided(const StepTimes& s, int64_t n) {
  StepTimes out;
  if (n <= 0) return out;
  for (int i = 0; i < kNumPhases; ++i) out.phase_s[i] = s.phase_s[i] / n;
  out.total_s = s.total_s / n;
  return out;
}

}  // namespace

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::Data:
      return "data";
    case Phase::Forward:
      return "forward";
    case Phase::Backward:
      return "backward";
    case Phase::CommWait:
      return "comm_wait";
    case Phase::Optimizer:
      return "optimizer";
  }
  return "?";
}

double StepTimes::other_s() const {
  double sum = 0;
  for (double v : phase_s) sum += v;
  return total_s - sum;
}

StepTimer::StepTimer() : epoch_start_(Clock::now()) {}

void StepTimer::begin_epoch() {
  if (epoch_open_ || epoch_.steps > 0) end_epoch();
  epoch_ = Acc{};
  epoch_start_ = Clock::now();
  epoch_open_ = true;
}

void StepTimer::begin_step() {
  if (in_step_) end_step();
  step_ = StepTimes{};
  step_start_ = Clock::now();
  in_step_ = true;
  phase_ = -1;
}

void StepTimer::close_phase(Clock::time_point now) {
  if (phase_ >= 0 && trace::enabled()) [[unlikely]]  // the phase as a span: apps get the timeline's phases for free
    trace::complete(phase_name(static_cast<Phase>(phase_)), "phase", trace::to_trace_ns(phase_start_),
                    trace::to_trace_ns(now));
  if (phase_ >= 0) step_.phase_s[phase_] += std::chrono::duration<double>(now - phase_start_).count();
  phase_ = -1;
}

void StepTimer::start(Phase p) {
  if (!in_step_) begin_step();
  auto now = Clock::now();
  close_phase(now);
  phase_ = static_cast<int>(p);
  phase_start_ = now;
}

void StepTimer::stop() { close_phase(Clock::now()); }

void StepTimer::move_time(Phase from, Phase to, double seconds) {
  double& src = step_.phase_s[static_cast<int>(from)];
  double moved = std::clamp(seconds, 0.0, src);
  src -= moved;
  step_.phase_s[static_cast<int>(to)] += moved;
}

StepTimes StepTimer::end_step() {
  if (!in_step_) return step_;
  auto now = Clock::now();
  close_phase(now);
  step_.total_s = std::chrono::duration<double>(now - step_start_).count();
  if (trace::enabled()) [[unlikely]]
    trace::complete("step", "phase", trace::to_trace_ns(step_start_), trace::to_trace_ns(now));
  in_step_ = false;
  add_step(step_);
  closed_ = step_;
  return step_;
}

void StepTimer::discard_step() {
  if (!in_step_) return;
  in_step_ = false;
  phase_ = -1;
  step_ = closed_;
}

void StepTimer::add_step(const StepTimes& s) {
  bool first = epoch_.steps == 0;  // See the header: means skip each epoch's first step.
  for (Acc* a : {&epoch_, &run_}) {
    ++a->steps;
    accumulate(a->all, s);
    if (!first) {
      ++a->counted;
      accumulate(a->later, s);
    }
  }
}

EpochTimes StepTimer::finish(const Acc& a) {
  EpochTimes e;
  e.steps = a.steps;
  e.total = a.all;
  // With a single step there is nothing after the first: average it rather than report 0.
  e.mean_steps = a.counted > 0 ? a.counted : a.steps;
  e.mean = a.counted > 0 ? divided(a.later, a.counted) : divided(a.all, a.steps);
  e.wall_s = a.wall_s;
  return e;
}

EpochTimes StepTimer::epoch() const {
  EpochTimes e = finish(epoch_);
  e.wall_s = std::chrono::duration<double>(Clock::now() - epoch_start_).count();
  return e;
}

EpochTimes StepTimer::end_epoch() {
  if (in_step_) end_step();
  EpochTimes e = epoch();
  run_.wall_s += e.wall_s;
  epoch_ = Acc{};
  epoch_open_ = false;
  epoch_start_ = Clock::now();
  return e;
}

EpochTimes StepTimer::run() const {
  EpochTimes r = finish(run_);
  if (epoch_open_ || epoch_.steps > 0) r.wall_s += epoch().wall_s;
  return r;
}

StepTimer::Scope::Scope(StepTimer& t, Phase p) : timer_(t), previous_(t.scope_phase_) {
  timer_.scope_phase_ = static_cast<int>(p);
  timer_.start(p);
}

StepTimer::Scope::~Scope() {
  timer_.scope_phase_ = previous_;
  if (!timer_.in_step_) return;  // the step was closed inside the scope
  if (previous_ >= 0)
    timer_.start(static_cast<Phase>(previous_));
  else
    timer_.stop();
}

}  // namespace ddl::report
