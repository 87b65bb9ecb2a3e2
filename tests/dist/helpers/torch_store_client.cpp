// test_torchrun.sh helper. `HOST PORT`: talks to a PyTorch TCPStore (served by Python)
// through ddl's TorchStore, checks what Python put there, then leaves keys for Python to
// check; prints "ok ..." / "FAIL ..." lines, exits 0 when all passed. `--torchrun`: a rank
// under torchrun that joins through the agent's store, all-reduces its rank and prints the
// attempt its keys live in; rank 0 of attempt 0 then exits 3, so --max_restarts retries.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <ddl/base/error.h>
#include <ddl/dist/dist.h>
#include <ddl/dist/store/torch_store.h>
#include <ddl/tensor/core/factory.h>

using ddl::dist::Millis;
using ddl::dist::TorchStore;

namespace {

int failures = 0;
void check(const char* what, bool ok) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  std::fflush(stdout);
  failures += !ok;
}

int torchrun_rank() {
  ddl::dist::InitOptions opts;
  opts.timeout = std::chrono::seconds(30);
  auto& pg = *ddl::dist::init_process_group("gloo", opts);
  ddl::Tensor t = ddl::full(ddl::Shape{4}, double(pg.rank()));
  pg.all_reduce(t);
  const int attempt = ddl::dist::launch_env().restart_count;  // the store key prefix's attempt
  std::printf("rank %d/%d attempt %d sum %g\n", pg.rank(), pg.size(), attempt, double(t.data<float>()[0]));
  std::fflush(stdout);
  if (attempt == 0 && pg.rank() == 0) std::_Exit(3);  // no goodbye: attempt 0's keys stay behind
  ddl::dist::destroy_process_group();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--torchrun") return torchrun_rank();
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s HOST PORT | --torchrun\n", argv[0]);
    return 2;
  }
  const std::string host = argv[1];
  const std::string where = host + ":" + argv[2];
  try {
    // Python's master was made with world_size 2: it waits for this client's "init/" count.
    TorchStore s(host, std::atoi(argv[2]), Millis(30000));
    // Python sets these after its constructor returns: get() blocks until then.
    check("C++ get sees Python's set", s.get("py/k") == "from-python");
    check("C++ add continues Python's counter (40 + 2)", s.add("py/n", 2) == 42);
    check("C++ get reads a counter as decimal text", s.get("py/n") == "42");
    check("check: present keys", s.check({"py/k", "py/n"}));
    check("check: a missing key", !s.check({"py/k", "absent"}));
    s.wait({"py/k", "py/n"});

    const auto t0 = std::chrono::steady_clock::now();
    std::string message;
    try {
      s.get("absent", Millis(500));
    } catch (const ddl::Error& e) {
      message = e.what();
    }
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    check("a get of a missing key times out, naming the key and the address",
          message.find("absent") != std::string::npos && message.find(where) != std::string::npos);
    check("... after its 500 ms timeout, not much later", dt >= 0.45 && dt < 5.0);
    if (message.empty() || !(dt < 5.0)) std::printf("  message: %s\n  took %.3f s\n", message.c_str(), dt);
    check("the store works after a timed-out get", s.get("py/k") == "from-python");

    s.set("cpp/k", std::string("from-c++\0bin", 12));
    check("C++ add of a new key", s.add("cpp/counter", 7) == 7);
    s.set("cpp/done", "1");
    // Python answers after reading our keys: a blocking get across the two clients.
    check("Python's verdict on C++'s keys", s.get("py/verdict", Millis(30000)) == "ok");
  } catch (const std::exception& e) {
    std::printf("FAIL unexpected error: %s\n", e.what());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
