// ddl-bench trace-overhead: what --trace costs. Times train steps (forward, backward, SGD)
// alternately with tracing off and on (start() before and stop() after each traced step, so
// drift and other load hit both modes alike) and reports both medians; also the cost of
// one instrumented site while tracing is off (a relaxed load and a branch), measured over
// many calls, times the sites a step passes (the events it records when on).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include <ddl/ddl.h>
#include <ddl/trace/snapshot.h>
#include <ddl/trace/trace.h>

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Nanoseconds per disabled site: a span and an instant, as the library's sites use them.
double disabled_site_ns() {
  constexpr int kCalls = 20'000'000;
  const double t0 = ddl::bench::now_seconds();
  for (int i = 0; i < kCalls; ++i) {
    ddl::trace::Span span("x", "bench", {{"i", i}});
    ddl::trace::instant("y", "bench", {{"i", i}});
  }
  return (ddl::bench::now_seconds() - t0) * 1e9 / (2.0 * kCalls);
}

// Nanoseconds per recorded event (a span's two clock reads and its slot), tracing on.
double enabled_event_ns() {
  constexpr int kCalls = 200'000;
  ddl::trace::Options o;
  o.max_events = kCalls;
  ddl::trace::start(o);
  const double t0 = ddl::bench::now_seconds();
  for (int i = 0; i < kCalls; ++i) ddl::trace::Span span("x", "bench", {{"i", i}});
  const double ns = (ddl::bench::now_seconds() - t0) * 1e9 / kCalls;
  ddl::trace::stop();
  return ns;
}

}  // namespace

int trace_overhead_main(int argc, char** argv) {
  using namespace ddl;
  std::string model_name = "vgg11_bn";
  int64_t batch = 32, steps = 20;  // per mode
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--model")
      model_name = next();
    else if (a == "--batch")
      batch = std::stoll(next());
    else if (a == "--steps")
      steps = std::stoll(next());
    else if (a == "--threads" || a == "--clock")
      next();
    else {
      std::fprintf(stderr, "trace-overhead: unknown flag %s\n", a.c_str());
      return 1;
    }
  }
  if (batch < 1 || steps < 1) {
    std::fprintf(stderr, "trace-overhead: --batch and --steps must be at least 1\n");
    return 1;
  }
  const int threads = bench::threads_arg(argc, argv, get_num_threads());
  set_num_threads(threads);
  trace::set_thread_name("compute");
  manual_seed(0);
  auto model = nn::make_model(model_name, 10, 3, 32);
  optim::SGD opt(model->parameters(), {.lr = 0.01, .momentum = 0.9, .weight_decay = 5e-4});
  Generator gen(1);
  const Tensor x = randn({batch, 3, 32, 32}, gen), y = randint(0, 10, {batch}, gen);
  auto step = [&] {
    Variable loss = cross_entropy((*model)(Variable(x)), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
  };
  step();  // warm-up: caches, allocator
  std::vector<double> off, on;
  int64_t events = 0;
  for (int64_t s = 0; s < steps; ++s)
    for (bool traced : {s % 2 == 0, s % 2 != 0}) {  // off-on, then on-off: neither always goes first
      const double t0 = bench::now_seconds();
      if (traced) trace::start();
      step();
      if (traced) trace::stop();
      (traced ? on : off).push_back((bench::now_seconds() - t0) * 1e3);
      if (traced) events += static_cast<int64_t>(trace::snapshot().events.size());
    }
  const double off_ms = median_of(off), on_ms = median_of(on);
  const double events_per_step = static_cast<double>(events) / static_cast<double>(steps);
  const double site_ns = disabled_site_ns(), event_ns = enabled_event_ns();
  std::printf(
      "{\"bench\":\"trace-overhead\",\"model\":\"%s\",\"batch\":%ld,\"threads\":%d,\"steps_per_mode\":%ld,"
      "\"off_ms_per_step\":%.2f,\"on_ms_per_step\":%.2f,\"on_overhead_pct\":%.2f,\"events_per_step\":%.0f,"
      "\"disabled_site_ns\":%.2f,\"off_cost_pct_estimate\":%.5f,\"event_ns\":%.1f,\"on_cost_pct_estimate\":%.4f}\n",
      model_name.c_str(), static_cast<long>(batch), threads, static_cast<long>(steps), off_ms, on_ms,
      100.0 * (on_ms - off_ms) / off_ms, events_per_step, site_ns, 100.0 * events_per_step * site_ns * 1e-6 / off_ms,
      event_ns, 100.0 * events_per_step * event_ns * 1e-6 / off_ms);
  return 0;
}
