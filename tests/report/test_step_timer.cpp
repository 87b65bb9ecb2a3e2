// StepTimer: phases add up exclusively (nested scopes included), the first step of each
// epoch is left out of means, and run() spans epochs. Timing from short sleeps, so the
// bounds are loose: lower bounds exact, upper bounds with slack for a loaded machine.
// StepTimer(device) on the CPU runs the device-clock path (marks, a queue, resolve())
// with host-clock marks; tests/report/test_step_timer_cuda.cpp runs it on a GPU.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include <ddl/report/step_timer.h>

using namespace ddl::report;

namespace {

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
constexpr double kSlack = 0.05;  // seconds

}  // namespace

TEST_CASE("StepTimer: phases of one step, nested scopes attribute time exclusively", "[apps]") {
  StepTimer timer;
  timer.begin_step();
  timer.start(Phase::Data);
  sleep_ms(20);
  timer.start(Phase::Forward);
  sleep_ms(30);
  {
    auto backward = timer.scope(Phase::Backward);
    sleep_ms(20);
    {
      auto wait = timer.scope(Phase::CommWait);
      sleep_ms(15);
    }
    sleep_ms(10);  // back in Backward
  }
  sleep_ms(10);  // outside any phase: "other"
  {
    auto opt = timer.scope(Phase::Optimizer);
    sleep_ms(10);
  }
  StepTimes s = timer.end_step();

  CHECK(s.phase(Phase::Data) >= 0.020);
  CHECK(s.phase(Phase::Data) < 0.020 + kSlack);
  CHECK(s.phase(Phase::Forward) >= 0.030);
  CHECK(s.phase(Phase::Backward) >= 0.030);
  CHECK(s.phase(Phase::Backward) < 0.030 + kSlack);
  CHECK(s.phase(Phase::CommWait) >= 0.015);
  CHECK(s.phase(Phase::CommWait) < 0.015 + kSlack);
  CHECK(s.phase(Phase::Optimizer) >= 0.010);
  CHECK(s.other_s() >= 0.010);
  CHECK(s.total_s >= 0.115);
  double sum = s.other_s();
  for (double v : s.phase_s) sum += v;
  CHECK(sum == Approx(s.total_s));
  CHECK(std::string(phase_name(Phase::CommWait)) == "comm_wait");
}

TEST_CASE("StepTimer: means leave out each epoch's first step", "[apps]") {
  StepTimer timer;
  for (int epoch = 0; epoch < 2; ++epoch) {
    timer.begin_epoch();
    for (int step = 0; step < 3; ++step) {
      timer.start(Phase::Forward);  // begins the step itself
      sleep_ms(step == 0 ? 80 : 10);
      timer.end_step();
    }
    EpochTimes e = timer.end_epoch();
    CHECK(e.steps == 3);
    CHECK(e.mean_steps == 2);
    CHECK(e.total.phase(Phase::Forward) >= 0.100);
    CHECK(e.mean.phase(Phase::Forward) >= 0.010);
    CHECK(e.mean.phase(Phase::Forward) < 0.010 + kSlack);
    CHECK(e.mean.total_s < 0.010 + kSlack);
    CHECK(e.wall_s >= e.total.total_s);
  }
  EpochTimes run = timer.run();
  CHECK(run.steps == 6);
  CHECK(run.mean_steps == 4);
  CHECK(run.mean.phase(Phase::Forward) < 0.010 + kSlack);
  CHECK(run.total.phase(Phase::Forward) >= 0.200);
  CHECK(run.wall_s >= run.total.total_s);
}

TEST_CASE("StepTimer: a single-step epoch averages that step; end_epoch closes an open step", "[apps]") {
  StepTimer timer;
  timer.begin_epoch();
  timer.start(Phase::Data);
  sleep_ms(10);
  EpochTimes e = timer.end_epoch();  // the step is still open
  CHECK(e.steps == 1);
  CHECK(e.mean_steps == 1);
  CHECK(e.mean.phase(Phase::Data) >= 0.010);
  CHECK(e.mean.total_s == Approx(e.total.total_s));
}

TEST_CASE("StepTimer: move_time shifts closed time between phases, never below zero", "[apps]") {
  StepTimer timer;
  timer.start(Phase::Backward);
  sleep_ms(20);
  timer.start(Phase::Optimizer);
  timer.move_time(Phase::Backward, Phase::CommWait, 0.005);
  timer.move_time(Phase::Data, Phase::CommWait, 1.0);  // Data holds nothing to move
  StepTimes s = timer.end_step();
  CHECK(s.phase(Phase::CommWait) == Approx(0.005));
  CHECK(s.phase(Phase::Backward) >= 0.015);
  CHECK(s.phase(Phase::Data) == 0);
  timer.start(Phase::Backward);
  timer.start(Phase::Optimizer);
  timer.move_time(Phase::Backward, Phase::CommWait, 10.0);  // more than backward took
  s = timer.end_step();
  CHECK(s.phase(Phase::Backward) == 0);
  CHECK(s.phase(Phase::CommWait) < 0.01);
}

TEST_CASE("StepTimer(device): steps queue until resolve(), which gives each its phases", "[apps]") {
  StepTimer timer(ddl::Device::cpu());
  CHECK(timer.device_clock());
  CHECK_FALSE(StepTimer().device_clock());
  timer.begin_epoch();
  for (int step = 0; step < 2; ++step) {
    timer.start(Phase::Data);
    sleep_ms(10);
    timer.start(Phase::Forward);
    sleep_ms(step == 0 ? 40 : 20);
    {
      auto backward = timer.scope(Phase::Backward);
      sleep_ms(15);
      {
        auto wait = timer.scope(Phase::CommWait);
        sleep_ms(10);
      }
    }
    sleep_ms(10);                                              // "other"
    timer.move_time(Phase::Backward, Phase::CommWait, 0.005);  // made when resolved
    const StepTimes closed = timer.end_step();
    CHECK(closed.total_s == 0);  // a device clock's times come from resolve()
    CHECK(timer.pending() == step + 1);
  }
  CHECK(timer.epoch().steps == 0);  // nothing counted before resolve()
  const std::vector<StepTimes> steps = timer.resolve();
  REQUIRE(steps.size() == 2);
  CHECK(timer.pending() == 0);
  CHECK(timer.resolve().empty());
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepTimes& s = steps[i];
    CHECK(s.phase(Phase::Data) >= 0.010);
    CHECK(s.phase(Phase::Data) < 0.010 + kSlack);
    CHECK(s.phase(Phase::Forward) >= (i == 0 ? 0.040 : 0.020));
    CHECK(s.phase(Phase::Backward) >= 0.010);  // 15 ms less the 5 moved
    CHECK(s.phase(Phase::CommWait) >= 0.015);
    CHECK(s.other_s() >= 0.010);
    CHECK(s.total_s >= (i == 0 ? 0.085 : 0.065));
    double sum = s.other_s();
    for (double v : s.phase_s) sum += v;
    CHECK(sum == Approx(s.total_s));
  }
  CHECK(timer.last_step().total_s == steps[1].total_s);
  EpochTimes e = timer.epoch();
  CHECK(e.steps == 2);
  CHECK(e.mean_steps == 1);  // the first step is left out of means
  CHECK(e.mean.phase(Phase::Forward) == Approx(steps[1].phase(Phase::Forward)));
}

TEST_CASE("StepTimer(device): end_epoch resolves queued steps; a discarded step is not counted", "[apps]") {
  StepTimer timer(ddl::Device::cpu());
  timer.begin_epoch();
  timer.start(Phase::Forward);
  sleep_ms(10);
  timer.end_step();
  timer.start(Phase::Data);  // the wait that finds the loader empty
  sleep_ms(5);
  timer.discard_step();
  EpochTimes e = timer.end_epoch();
  CHECK(timer.pending() == 0);
  CHECK(e.steps == 1);
  CHECK(e.total.phase(Phase::Forward) >= 0.010);
  CHECK(e.total.phase(Phase::Data) == 0);
  CHECK(timer.run().steps == 1);
}
