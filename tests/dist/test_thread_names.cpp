// The threads ddl starts carry their role as the kernel's thread name (trace/thread_name.h),
// which `ps -L`, `top -H` and /proc/<pid>/task/<tid>/comm show: each case starts the thing,
// then reads every thread's comm of this process while it runs.
#include <dirent.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include <ddl/data/dataloader.h>
#include <ddl/data/synthetic.h>
#include <ddl/dist/dist.h>
#include <ddl/report/worker_metrics.h>
#include <ddl/tensor/core/parallel.h>
#include <ddl/trace/thread_name.h>

using namespace ddl;
using namespace ddl::dist;

namespace {

std::vector<std::string> thread_names() {
  std::vector<std::string> names;
  DIR* d = opendir("/proc/self/task");
  if (!d) return names;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    if (std::getline(in, name)) names.push_back(name);
  }
  closedir(d);
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Each thread names itself as it starts: poll (up to 5 s) until `count` threads carry each name.
std::vector<std::string> names_once_started(const std::vector<std::string>& expected, int count = 1) {
  std::vector<std::string> names;
  for (int i = 0; i < 1000; ++i) {
    names = thread_names();
    bool all = true;
    for (const auto& e : expected) all = all && std::count(names.begin(), names.end(), e) >= count;
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += "[" + n + "] ";
  return s;
}

}  // namespace

TEST_CASE("thread names: a name over 15 bytes is cut, as the kernel keeps it", "[dist]") {
  std::string seen;
  std::thread([&] {
    trace::set_os_thread_name("a name of twenty bytes");
    seen = trace::os_thread_name();
  }).join();
  CHECK(seen == "a name of twent");
}

TEST_CASE("thread names: data loader workers are 'loader N'", "[dist]") {
  auto ds = std::make_shared<data::SyntheticDataset>(16, Shape{1, 2, 2}, 2);
  data::DataLoader loader(ds, data::DataLoaderOptions(2).workers(2));
  auto it = loader.begin();
  const auto names = names_once_started({"loader 0", "loader 1"});
  INFO(joined(names));
  CHECK(has(names, "loader 0"));
  CHECK(has(names, "loader 1"));
}

TEST_CASE("thread names: the store server's threads are 'store' and 'store client'", "[dist]") {
  TCPStoreServer server("127.0.0.1", 0);
  TCPStoreOptions so;
  so.timeout = Millis(10000);
  TCPStore client("127.0.0.1", server.port(), so);
  client.set("k", "v");
  CHECK(client.get("k", Millis(10000)) == "v");
  const auto names = names_once_started({"store", "store client"});
  INFO(joined(names));
  CHECK(has(names, "store"));
  CHECK(has(names, "store client"));
}

TEST_CASE("thread names: a gloo group's workers are 'gloo' and 'gloo p2p'", "[dist]") {
  auto store = std::make_shared<HashStore>(Millis(20000));
  std::vector<std::string> names;
  auto outs = test::run_threads(2, [&](int rank) {
    GlooOptions o;
    o.timeout = Millis(20000);
    ProcessGroupGloo pg(store, rank, 2, o);
    pg.barrier();
    if (rank == 0) names = names_once_started({"gloo", "gloo p2p"}, 2);  // both groups exist until the barrier
    pg.barrier();
  });
  INFO(test::describe(outs) << joined(names));
  REQUIRE(test::all_ok(outs));
  CHECK(std::count(names.begin(), names.end(), "gloo") == 2);
  CHECK(std::count(names.begin(), names.end(), "gloo p2p") == 2);
}

TEST_CASE("thread names: the resource sampler's thread is 'metrics'", "[dist]") {
  report::ResourceSampler sampler({.interval_s = 60});
  const auto names = names_once_started({"metrics"});
  INFO(joined(names));
  CHECK(has(names, "metrics"));
}

TEST_CASE("thread names: OpenMP's pool threads are 'compute'", "[dist]") {
  set_num_threads(2);
  if (get_num_threads() < 2) {
    WARN("built without OpenMP: no pool threads to name");
    return;
  }
  std::vector<std::string> names;
  ddl::parallel_for(0, 2, 1, [&](int64_t b, int64_t) {
    if (b == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // both threads run
  });
  names = names_once_started({"compute"});  // the pool outlives the region
  INFO(joined(names));
  CHECK(has(names, "compute"));
}
