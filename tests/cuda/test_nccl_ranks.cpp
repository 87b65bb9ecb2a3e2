// The nccl group across two processes, each a real rank over a TCPStore: every collective
// against its closed form (its send/recv ring posts both receives first: the lanes must be
// connected before), the CUDA-tensor checks, a barrier after send/recv, a receive across a
// barrier and `recv; barrier; send` on both ranks, DDP equal to one process, a failed
// creation of the send/recv communicators breaking the group, a timeout while a thread is
// inside NCCL leaving the communicators alone, and their abort once a thread that held the
// launch lock lets go of it. Built twice:
// test_nccl_ranks puts rank r on cuda:r and needs two GPUs (its main exits 77 with fewer, see
// cuda_main.cpp); test_nccl_shared_gpu (DDL_NCCL_SHARED_GPU) puts both ranks on cuda:0, so a
// one-GPU machine still moves collective data between processes. NCCL refuses two ranks of one
// communicator on one GPU of one host ("Duplicate GPU detected", NVIDIA/nccl#418: its topology
// search maps one GPU to one rank); each rank here gets dist::shared_gpu_nccl_env (its own
// NCCL_HOSTID, read by NCCL's getHostHash, src/misc/utils.cc), so NCCL takes them for two
// hosts and connects them over its socket transport on the loopback. Should an NCCL refuse that too, the case reports
// skipped. Processes are fork + exec of this binary (a child forked after CUDA init cannot use CUDA), each running the
// hidden "nccl rank process" case.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/collective_checks.h"
#include "tests/common/skip.h"
#include "tests/cuda/nccl_checks.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
#include <ddl/tensor/core/devices.h>

#ifndef DDL_NCCL_SHARED_GPU
#define DDL_NCCL_SHARED_GPU 0
#endif

using namespace ddl;
using namespace ddl::dist;

namespace {

constexpr int kWorld = 2;
// A rank exits with this when NCCL refused to build the communicator (not a failure of ddl's).
constexpr int kNcclRefused = 77;

Device rank_device(int rank) { return Device::cuda(DDL_NCCL_SHARED_GPU ? 0 : rank); }

struct RankStatuses {
  int refused = 0;       // ranks that exited kNcclRefused
  std::string failures;  // the others that did not exit 0
};

// Runs this binary's hidden "nccl rank process" case as kWorld processes.
RankStatuses spawn_ranks(const std::string& scenario, int port, double deadline_s = 120) {
  char exe[PATH_MAX];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  REQUIRE(len > 0);
  exe[len] = '\0';
  std::vector<pid_t> pids;
  for (int r = 0; r < kWorld; ++r) {
    // The child only calls execve: everything it needs is built here (no malloc after fork).
    std::vector<std::string> env_strings = {
        "DDL_NCCL_TEST_RANK=" + std::to_string(r), "DDL_NCCL_TEST_WORLD=" + std::to_string(kWorld),
        "DDL_NCCL_TEST_PORT=" + std::to_string(port), "DDL_NCCL_TEST_SCENARIO=" + scenario};
    if (DDL_NCCL_SHARED_GPU) {  // as train_cifar --share-gpu; a default the caller set is kept
      const auto vars = dist::shared_gpu_nccl_env(r, /*one_node=*/true);
      for (size_t i = 0; i < vars.size(); ++i)
        if (i == 0 || !std::getenv(vars[i].first.c_str())) env_strings.push_back(vars[i].first + "=" + vars[i].second);
    }
    for (char** e = environ; *e; ++e)
      if (std::string(*e).rfind("DDL_NCCL_TEST_", 0) != 0 && std::string(*e).rfind("NCCL_HOSTID=", 0) != 0)
        env_strings.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    char name[] = "nccl rank process";  // a hidden test case runs when named
    char* argv[] = {exe, name, nullptr};
    const pid_t pid = fork();
    if (pid == 0) {
      execve(exe, argv, envp.data());
      _exit(127);
    }
    REQUIRE(pid > 0);
    pids.push_back(pid);
  }
  RankStatuses out;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < kWorld; ++r) {
    int status = 0;
    while (waitpid(pids[r], &status, WNOHANG) == 0) {
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > deadline_s) {
        kill(pids[r], SIGKILL);
        waitpid(pids[r], &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == kNcclRefused)
      ++out.refused;
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      out.failures += "\nrank " + std::to_string(r) + ": " +
                      (WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                           : "exit status " + std::to_string(WEXITSTATUS(status)));
  }
  return out;
}

// Rank 0's first send finds no peer making one, so creating the send/recv communicators
// times out. That breaks the group: a second send must fail at once naming it, not reuse the
// first attempt's store keys (whose check-in count is full) and hang in ncclCommInitRank.
void p2p_retry(ProcessGroup& pg, Store& store, Device dev) {
  if (pg.rank() != 0) {
    store.get("p2p_retry_done", Millis(60000));
    return;
  }
  Tensor t = ones(Shape{4}, TensorOptions(DType::Float32, dev));
  REQUIRE_THROWS_WITH(pg.send(t, 1), Catch::Contains("rendezvous failed"));
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(pg.send(t, 1), Catch::Contains("broken by an earlier failure"));
  REQUIRE(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  REQUIRE(pg.is_broken());
  store.set("p2p_retry_done", "1");
}

// A collective times out while another thread of rank 0 is blocked inside NCCL: rank 1 checks
// in for the send/recv communicators through the store (the keys of exchange_unique_ids)
// without making them, so rank 0's ncclCommInitRank waits for it forever (NVIDIA/nccl#289),
// holding the launch lock. Aborting a blocking communicator while a thread is inside NCCL is
// forbidden (see Note [NCCL abort]): the watchdog must fail the collective, saying why it
// left the communicators alone. Both ranks leave with _Exit: a thread stays inside NCCL.
void abort_while_inside_nccl(ProcessGroup& pg, Store& store, const std::string& scenario, Device dev) {
  if (pg.rank() != 0) {
    store.add(scenario + "/nccl/p2p/joined", 1);
    store.get("abort_blocked_done", Millis(60000));
    std::fflush(nullptr);
    std::_Exit(0);
  }
  Tensor x = ones(Shape{4}, TensorOptions(DType::Float32, dev));
  auto stuck = pg.all_reduce_async(x);  // rank 1 never joins it
  std::thread([&pg, dev] {
    Tensor t = ones(Shape{4}, TensorOptions(DType::Float32, dev));
    try {
      pg.send(t, 1);  // blocks in ncclCommInitRank
    } catch (const Error&) {
    }
  }).detach();
  std::string what;
  try {
    stuck->wait(Millis(60000));
  } catch (const Error& e) {
    what = e.what();
  }
  const bool ok = what.find("holds the launch lock") != std::string::npos && pg.is_broken();
  if (!ok) std::fprintf(stderr, "rank 0: expected the collective to fail without an abort, got: %s\n", what.c_str());
  store.set("abort_blocked_done", "1");
  std::fflush(nullptr);
  std::_Exit(ok ? 0 : 1);
}

// A collective times out while another thread of rank 0 holds the launch lock waiting in the
// store for rank 1's check-in to the send/recv communicators, which never comes: abort_all
// cannot abort then. Once that thread's rendezvous times out and it lets go of the lock, the
// communicators must be aborted (see Note [NCCL abort]), releasing the all-reduce kernel that
// still spins on the GPU for a rank 1 that never joins: the device synchronize returns.
// Without the abort it never does, and spawn_ranks kills the rank at its deadline. What this
// covers is comms_for's request_abort on the failed rendezvous; the abort_pending_ path
// (abort_all finding the lock held) is not reached separately: the request_abort comes first.
void abort_after_lock(ProcessGroup& pg, Store& store, Device dev) {
  if (pg.rank() != 0) {
    store.get("abort_after_done", Millis(60000));
    std::fflush(nullptr);
    std::_Exit(0);
  }
  Tensor x = ones(Shape{4}, TensorOptions(DType::Float32, dev));
  auto stuck = pg.all_reduce_async(x);  // rank 1 never joins it
  std::thread sender([&pg, dev] {
    std::this_thread::sleep_for(std::chrono::seconds(2));  // still waiting when the collective times out
    Tensor t = ones(Shape{4}, TensorOptions(DType::Float32, dev));
    try {
      pg.send(t, 1);  // waits in the rendezvous, holding the launch lock, until its timeout
    } catch (const Error&) {
    }
  });
  std::string what;
  try {
    stuck->wait(Millis(60000));
  } catch (const Error& e) {
    what = e.what();
  }
  sender.join();
  try {
    cuda::synchronize(dev.index);  // returns once the abort released the all-reduce
  } catch (const Error&) {
  }
  const bool ok = what.find("holds the launch lock") != std::string::npos && pg.is_broken();
  if (!ok) std::fprintf(stderr, "rank 0: expected the collective to fail before the abort, got: %s\n", what.c_str());
  store.set("abort_after_done", "1");
  std::fflush(nullptr);
  std::_Exit(ok ? 0 : 1);
}

}  // namespace

TEST_CASE("nccl world 2: collectives and DDP across processes", "[cuda][nccl]") {
  // Reached only with enough GPUs: cuda_main.cpp exits 77 before, so this never passes vacuously.
  REQUIRE(cuda::device_count() >= (DDL_NCCL_SHARED_GPU ? 1 : kWorld));
  for (const char* scenario : {"collectives", "ddp", "p2p_retry", "abort_blocked", "abort_after_lock"}) {
    TCPStoreServer server("127.0.0.1", 0);
    const RankStatuses s = spawn_ranks(scenario, server.port());
    INFO(scenario << s.failures);
    REQUIRE(s.failures.empty());
    if (s.refused == kWorld)
      DDL_SKIP("NCCL refused " << kWorld << " ranks on one GPU even with distinct NCCL_HOSTID (see the ranks' "
                               << "messages above); the collectives did not run");
    REQUIRE(s.refused == 0);
  }
}

// One rank of the world-2 case; hidden, run only by spawn_ranks.
TEST_CASE("nccl rank process", "[.nccl_rank]") {
  const char* rank_s = std::getenv("DDL_NCCL_TEST_RANK");
  if (!rank_s) return;
  const int rank = std::atoi(rank_s), world = std::atoi(std::getenv("DDL_NCCL_TEST_WORLD"));
  const std::string scenario = std::getenv("DDL_NCCL_TEST_SCENARIO");
  TCPStoreOptions so;
  so.timeout = Millis(60000);
  auto store = std::make_shared<TCPStore>("127.0.0.1", std::atoi(std::getenv("DDL_NCCL_TEST_PORT")), so);
  InitOptions opts = test::nccl_test_options();
  if (scenario == "p2p_retry") opts.timeout = Millis(10000);  // the send/recv rendezvous is meant to time out
  if (scenario == "abort_blocked" || scenario == "abort_after_lock")
    opts.timeout = Millis(5000);  // a collective is meant to time out
  auto pg = new_group("nccl", std::make_shared<PrefixStore>(scenario, store), rank, world, opts);
  const Device dev = rank_device(rank);
  // The first collective builds the communicator: a refusal by NCCL is reported, not failed.
  Tensor first = full(Shape{4}, double(rank + 1)).to(dev);
  try {
    pg->all_reduce(first);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (DDL_NCCL_SHARED_GPU &&
        (what.find("invalid usage") != std::string::npos || what.find("Duplicate GPU") != std::string::npos)) {
      std::fprintf(stderr, "rank %d: NCCL refused the shared GPU: %s\n", rank, what.c_str());
      std::fflush(nullptr);
      std::_Exit(kNcclRefused);
    }
    throw;
  }
  test::expect_values<float>(
      first, [&](int64_t) { return world * (world + 1) / 2; }, "first all_reduce");
  pg->reset_stats();
  if (scenario == "p2p_retry") {
    p2p_retry(*pg, *store, dev);
    return;
  }
  if (scenario == "abort_blocked") abort_while_inside_nccl(*pg, *store, scenario, dev);  // never returns
  if (scenario == "abort_after_lock") abort_after_lock(*pg, *store, dev);                // never returns
  if (scenario == "collectives") {
    test::OnDevice adapter(pg, dev);
    test::check_all_collectives(adapter);
    test::check_native(*pg, dev);
    test::check_barrier_after_p2p(*pg, dev);
    test::check_recv_across_barrier(*pg, dev);
    test::check_recv_barrier_send_both(*pg, dev);
  } else {
    test::ddp_matches_one_process(pg, dev);
  }
  pg->barrier();
}
