// ddlrun test helper for the flight-recorder drills (tests/apps/test_flight_drills.sh): each
// rank all-reduces a small tensor every few milliseconds for --steps steps, and rank
// --fault-rank breaks the job at step --fault-step in one known way:
//   freeze  raise(SIGSTOP): alive, answering nobody
//   die     raise(SIGKILL): gone without a dump, as on a host that lost power
//   desync  a broadcast where the others all-reduce
//   segv    raise(SIGSEGV): its recorder dumps from the signal handler
//   nostart never joins the rendezvous (sleeps instead)
//   none    nothing (the test cuts a link from outside)
// --trace PATH records the run's timeline (dist/trace_merge.h) as train_cifar --trace does.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <ddl/dist/dist.h>
#include <ddl/tensor/core/factory.h>

int main(int argc, char** argv) {
  std::string fault = "none", trace;
  int fault_rank = 1, fault_step = 3, steps = 1000000, sleep_ms = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--fault")
      fault = v;
    else if (k == "--fault-rank")
      fault_rank = std::atoi(v.c_str());
    else if (k == "--fault-step")
      fault_step = std::atoi(v.c_str());
    else if (k == "--steps")
      steps = std::atoi(v.c_str());
    else if (k == "--sleep-ms")
      sleep_ms = std::atoi(v.c_str());
    else if (k == "--trace")
      trace = v;
    else {
      std::fprintf(stderr, "flight_drill: unknown flag %s\n", k.c_str());
      return 2;
    }
  }
  const char* rank_env = std::getenv("RANK");
  const int my_rank = rank_env ? std::atoi(rank_env) : 0;
  if (fault == "nostart" && my_rank == fault_rank) {
    std::this_thread::sleep_for(std::chrono::hours(1));
    return 0;
  }
  try {
    auto& pg = *ddl::dist::init_process_group("gloo");
    if (!trace.empty()) ddl::dist::start_trace(trace);
    ddl::Tensor t = ddl::full(ddl::Shape{1000}, 1.0);
    for (int step = 0; step < steps; ++step) {
      if (pg.rank() == fault_rank && step == fault_step) {
        if (fault == "freeze") raise(SIGSTOP);
        if (fault == "die") raise(SIGKILL);
        if (fault == "segv") raise(SIGSEGV);
        if (fault == "desync") {
          pg.broadcast(t, 0);
          continue;
        }
      }
      pg.all_reduce(t);
      std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    }
    if (!trace.empty()) ddl::dist::write_trace(trace);
    std::printf("flight_drill: %d steps done\n", steps);
    ddl::dist::destroy_process_group();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flight_drill: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
