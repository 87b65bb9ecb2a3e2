// StepTimer: a phase clock per step and running sums per epoch and per run. Every step
// is added to "all"; steps after an epoch's first also to "later", which means use.
//
// Note [Device clock]
// On a GPU the host only queues work: a phase timed on the host clock is the time to
// queue it, and the GPU time lands wherever the host next waits (reading the loss). So
// StepTimer(device) records a DeviceMark (a CUDA event on the current stream) at each
// boundary: the step's start, each start()/stop(), and end_step(). A phase's time is the
// GPU's time from its mark to the next, including any time the GPU sat idle waiting for
// the host to queue it; the step's total is its first mark to its last. Nothing here
// waits: a closed step is queued until resolve(), which the caller runs after a sync it
// does anyway (reading the loss), so the events are already reached. On the CPU the
// marks are host-clock readings and the result is what StepTimer() measures.
#include <algorithm>

#include <ddl/report/step_timer.h>
#include <ddl/trace/trace.h>

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

void shift(StepTimes& s, Phase from, Phase to, double seconds) {
  double& src = s.phase_s[static_cast<int>(from)];
  double moved = std::clamp(seconds, 0.0, src);
  src -= moved;
  s.phase_s[static_cast<int>(to)] += moved;
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

StepTimer::StepTimer(Device clock) : device_clock_(true), clock_(clock), epoch_start_(Clock::now()) {}

void StepTimer::mark(int phase) { open_.marks.push_back({phase, DeviceMark::record(clock_)}); }

void StepTimer::begin_epoch() {
  if (epoch_open_ || epoch_.steps > 0) end_epoch();
  epoch_ = Acc{};
  epoch_start_ = Clock::now();
  epoch_open_ = true;
}

void StepTimer::begin_step() {
  if (in_step_) end_step();
  if (!device_clock_) step_ = StepTimes{};  // on a device clock, step_ is the last resolved
  step_start_ = Clock::now();
  in_step_ = true;
  phase_ = -1;
  if (device_clock_) {
    open_ = Queued{};
    mark(-1);
  }
}

void StepTimer::close_phase(Clock::time_point now) {
  if (phase_ >= 0 && trace::enabled()) [[unlikely]]  // the phase as a span: apps get the timeline's phases for free
    trace::complete(phase_name(static_cast<Phase>(phase_)), "phase", trace::to_trace_ns(phase_start_),
                    trace::to_trace_ns(now));
  if (phase_ >= 0 && !device_clock_) step_.phase_s[phase_] += std::chrono::duration<double>(now - phase_start_).count();
  phase_ = -1;
}

void StepTimer::start(Phase p) {
  if (!in_step_) begin_step();
  auto now = Clock::now();
  close_phase(now);
  phase_ = static_cast<int>(p);
  phase_start_ = now;
  if (device_clock_) mark(phase_);
}

void StepTimer::stop() {
  close_phase(Clock::now());
  if (device_clock_ && in_step_) mark(-1);
}

void StepTimer::move_time(Phase from, Phase to, double seconds) {
  if (device_clock_)
    open_.moves.push_back({from, to, seconds});
  else
    shift(step_, from, to, seconds);
}

StepTimes StepTimer::end_step() {
  if (!in_step_) return device_clock_ ? StepTimes{} : step_;
  auto now = Clock::now();
  close_phase(now);
  if (trace::enabled()) [[unlikely]]
    trace::complete("step", "phase", trace::to_trace_ns(step_start_), trace::to_trace_ns(now));
  in_step_ = false;
  if (device_clock_) {  // See Note [Device clock]
    mark(-1);
    pending_.push_back(std::move(open_));
    open_ = Queued{};
    return {};
  }
  step_.total_s = std::chrono::duration<double>(now - step_start_).count();
  add_step(step_);
  closed_ = step_;
  return step_;
}

std::vector<StepTimes> StepTimer::resolve() {
  std::vector<StepTimes> out;
  for (const Queued& q : pending_) {
    // Times from the step's first mark, so the phases never add up to more than the total.
    StepTimes s;
    double prev = 0;
    for (size_t i = 1; i < q.marks.size(); ++i) {
      const double t = q.marks.front().at.seconds_until(q.marks[i].at);
      if (q.marks[i - 1].phase >= 0) s.phase_s[q.marks[i - 1].phase] += t - prev;
      prev = t;
    }
    s.total_s = prev;
    for (const Move& m : q.moves) shift(s, m.from, m.to, m.seconds);
    add_step(s);
    step_ = closed_ = s;
    out.push_back(s);
  }
  pending_.clear();
  return out;
}

void StepTimer::discard_step() {
  if (!in_step_) return;
  in_step_ = false;
  phase_ = -1;
  if (device_clock_)
    open_ = Queued{};
  else
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
  resolve();
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
