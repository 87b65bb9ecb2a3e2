// The strategy registry and plugins (dist/sync/registry.h, plugin.h): the built-ins are
// registered through it; a new strategy is made by name and named in the unknown-spec
// error; bad and taken names are refused; a plugin built from a student's file
// (tests/install/consumer/student_tree.cpp) trains as allreduce does; a plugin that
// cannot be trusted or loaded, lacks the function, registers nothing or a taken name is
// refused with its file named, and leaves nothing registered.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include "tests/common/small_cnn.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
#include <ddl/dist/sync/common.h>

using namespace ddl;
using namespace ddl::dist;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

std::string plugin(const std::string& name) {
  return std::string(DDL_SYNC_PLUGIN_DIR) + "/libddl_test_sync_plugin_" + name + ".so";
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& s : sync_strategies()) out.push_back(s.name);
  return out;
}

// `steps` steps of the small CNN through `spec`, each rank on its own rows; the final parameters.
std::vector<float> train(const std::string& spec, std::shared_ptr<ProcessGroup> pg, int64_t steps) {
  const int rank = pg->rank(), world = pg->size();
  const int64_t b = 4;
  Generator g(11);
  const Tensor x = randn({steps * world * b, 1, 8, 8}, g), y = randint(0, 3, {steps * world * b}, g);
  auto model = test::make_small_cnn();
  for (auto& p : model->parameters()) p.data().add_(0.5 * rank);  // replicas start different
  auto sync = make_sync_strategy(spec, model, pg);
  DIST_EXPECT(sync->name() == spec, "name() is ", sync->name());
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t begin = (s * world + rank) * b;
    Variable loss = cross_entropy(sync->model().forward(Variable(x.narrow(0, begin, b))), y.narrow(0, begin, b));
    opt.zero_grad();
    loss.backward();
    sync->after_backward();
    sync->step(opt);
    sync->after_step();
  }
  std::vector<float> flat;
  for (auto& p : model->parameters()) {
    auto v = to_vector<float>(p.data().contiguous());
    flat.insert(flat.end(), v.begin(), v.end());
  }
  return flat;
}

// A copy of the tree plugin in a fresh folder, with `mode`.
std::string copy_with_mode(const fs::path& dir, mode_t mode) {
  const fs::path copy = dir / ("copy" + std::to_string(mode) + ".so");
  fs::copy_file(plugin("tree"), copy, fs::copy_options::overwrite_existing);
  REQUIRE(::chmod(copy.c_str(), mode) == 0);
  return copy.string();
}

}  // namespace

TEST_CASE("the built-in strategies come from the registry, in order, with their kinds", "[dist][sync]") {
  // Each built-in with whether it averages gradients (one large-batch SGD) or models.
  const std::vector<std::pair<std::string, bool>> builtins = {
      {"ddp", true},          {"allreduce", true}, {"gather-scatter", true}, {"ring", true},
      {"param-server", true}, {"stepwise", false}, {"local-sgd", false},     {"zero1", true},
      {"zero2", true},        {"fsdp", true},      {"async-ps", false}};
  const auto all = sync_strategies();
  REQUIRE(all.size() >= builtins.size());
  for (size_t i = 0; i < builtins.size(); ++i) {
    INFO(all[i].name);
    CHECK(all[i].name == builtins[i].first);
    CHECK(all[i].origin == "built-in");
    CHECK(!all[i].info.help.empty());
    CHECK(all[i].info.averages_gradients == builtins[i].second);
  }
  CHECK(all[6].usage() == "local-sgd:K");
  CHECK(all[6].example() == "local-sgd:4");
  CHECK(
      sync_strategy_usages().rfind("ddp | allreduce | gather-scatter | ring | param-server | stepwise | local-sgd:K | "
                                   "zero1 | zero2 | fsdp | async-ps:S",
                                   0) == 0);
  CHECK(all[10].example() == "async-ps:2");
  CHECK(sync_spec_problem("ring").empty());
  CHECK(sync_spec_problem("local-sgd:4").empty());
  CHECK_THAT(sync_spec_problem("ring:2"), Contains("takes no argument"));
  CHECK_THAT(sync_spec_problem("local-sgd"), Contains("local-sgd:K, e.g. local-sgd:4"));
  CHECK_THAT(sync_spec_problem("local-sgd:1000001"), Contains("between 1 and 1000000"));
  CHECK(sync_spec_averages_gradients("ring"));
  CHECK(!sync_spec_averages_gradients("local-sgd:4"));
  CHECK(!sync_spec_averages_gradients("bogus"));
}

TEST_CASE("register_sync_strategy: a new name is made and listed; bad or taken names are refused", "[dist][sync]") {
  register_sync_strategy(
      "test-allreduce",
      [](std::shared_ptr<nn::Module> m, std::shared_ptr<ProcessGroup> g) {
        return make_sync_strategy("allreduce", std::move(m), std::move(g));
      },
      "allreduce under another name");
  CHECK(names().back() == "test-allreduce");
  CHECK(find_sync_strategy("test-allreduce").origin == "built-in");  // registered by the program itself
  CHECK(sync_spec_averages_gradients("test-allreduce"));
  REQUIRE_THROWS_WITH(make_sync_strategy("bogus", test::make_small_cnn(), nullptr),
                      Contains("unknown sync strategy 'bogus'") && Contains("local-sgd:K | ") &&
                          Contains(" | test-allreduce (") && Contains("async-ps:S | "));
  SimpleSyncFactory dummy = [](std::shared_ptr<nn::Module>, std::shared_ptr<ProcessGroup>) {
    return std::unique_ptr<SyncStrategy>();
  };
  REQUIRE_THROWS_WITH(register_sync_strategy("ring", dummy, "again"),
                      Contains("'ring' is already registered (by built-in)"));
  REQUIRE_THROWS_WITH(register_sync_strategy("test-allreduce", dummy, "again"), Contains("already registered"));
  for (const char* bad : {"", "a b", "x:y", "../x", "a/b", ".."})
    REQUIRE_THROWS_WITH(register_sync_strategy(bad, dummy, "bad"), Contains("is not a strategy name"));
  REQUIRE_THROWS_WITH(register_sync_strategy("test-empty", SimpleSyncFactory(), "no factory"),
                      Contains("factory is empty"));
  CHECK(names().back() == "test-allreduce");  // nothing refused was added
}

TEST_CASE("a plugin's tree all-reduce trains as allreduce does", "[dist][sync]") {
  for (int world : {2, 3, 4}) {
    DYNAMIC_SECTION("world " << world) {
      test::ParentStoreServer server;
      const int port = server.port();
      auto outs = test::run_processes(world, [&](int rank) {
        auto pg = test::gloo_group(port, rank, world);
        load_sync_plugin(plugin("tree"));
        load_sync_plugin(plugin("tree"));  // a second time: nothing happens
        DIST_EXPECT(find_sync_strategy("tree").origin == "plugin " + plugin("tree"), "origin ",
                    find_sync_strategy("tree").origin);
        const auto tree = train("tree", pg, 4), ref = train("allreduce", pg, 4);
        // Two ranks: each sum has two terms, a + b in either order, so the bits agree.
        double diff = tree.size() == ref.size() ? 0 : 1e30;
        for (size_t i = 0; i < std::min(tree.size(), ref.size()); ++i)
          diff = std::max(diff, std::abs(double(tree[i]) - ref[i]) / (std::abs(double(ref[i])) + 1e-3));
        DIST_EXPECT(world == 2 ? tree == ref : diff < 1e-5, "world ", world, ": tree differs from allreduce by ", diff);
        const Tensor mine = from_vector(tree), hi = mine.clone(), lo = mine.clone();
        pg->all_reduce(hi, ReduceOp::Max);
        pg->all_reduce(lo, ReduceOp::Min);
        DIST_EXPECT(to_vector<float>(hi) == to_vector<float>(lo), "tree: replicas differ after training");
      });
      INFO(test::describe(outs));
      REQUIRE(test::all_ok(outs));
    }
  }
}

// Each plugin is loaded through /proc/self/fd/N; a second plugin that got the first one's
// descriptor number back was taken by dlopen for the library already loaded under that name.
TEST_CASE("two plugins in one process each register their own strategies", "[dist][sync]") {
  load_sync_plugin(plugin("tree"));
  load_sync_plugin(plugin("tree2"));
  CHECK(find_sync_strategy("tree").origin == "plugin " + plugin("tree"));
  CHECK(find_sync_strategy("tree2").origin == "plugin " + plugin("tree2"));
}

TEST_CASE("load_sync_plugin refuses what it cannot trust or use, naming the file", "[dist][sync]") {
  const auto before = names();
  const fs::path dir =
      fs::path(::mkdtemp(const_cast<char*>((fs::temp_directory_path() / "ddl-plugin-XXXXXX").string().c_str())));
  SECTION("a missing file") {
    REQUIRE_THROWS_WITH(load_sync_plugin("/nonexistent/libx.so"),
                        Contains("cannot open '/nonexistent/libx.so'") && Contains("No such file"));
  }
  SECTION("a folder") { REQUIRE_THROWS_WITH(load_sync_plugin(dir.string()), Contains("is not a regular file")); }
  SECTION("a file that is no library") {
    const std::string text = (dir / "text.so").string();
    { std::ofstream(text) << "not a library\n"; }
    REQUIRE_THROWS_WITH(load_sync_plugin(text), Contains("cannot load '" + text + "'"));
  }
  SECTION("a library without ddl_register_strategies") {
    REQUIRE_THROWS_WITH(load_sync_plugin(plugin("empty")),
                        Contains("'" + plugin("empty") + "' does not export ddl_register_strategies()"));
  }
  SECTION("a plugin that registers nothing") {
    REQUIRE_THROWS_WITH(load_sync_plugin(plugin("nothing")),
                        Contains(plugin("nothing")) && Contains("registered no strategy"));
  }
  SECTION("a plugin that registers a taken name") {
    REQUIRE_THROWS_WITH(load_sync_plugin(plugin("dup")),
                        Contains(plugin("dup")) && Contains("'allreduce' is already registered (by built-in)"));
    CHECK(find_sync_strategy("allreduce").origin == "built-in");
  }
  SECTION("a plugin whose second registration fails loses its first") {
    REQUIRE_THROWS_WITH(load_sync_plugin(plugin("half")),
                        Contains(plugin("half")) && Contains("'ring' is already registered (by built-in)"));
    CHECK_THAT(sync_spec_problem("half-ok"), Contains("unknown sync strategy 'half-ok'"));
  }
  SECTION("a file others may write") {
    for (mode_t mode : {0775, 0757, 0777, 0664}) {
      INFO("mode " << std::oct << mode);
      const std::string copy = copy_with_mode(dir, mode);
      REQUIRE_THROWS_WITH(load_sync_plugin(copy),
                          Contains("refusing '" + copy + "'") && Contains("writable by") && Contains("chmod go-w"));
    }
  }
  SECTION("a file another user owns") {
    if (::geteuid() != 0) {
      WARN("not root: cannot give a file to another user; case not checked");
    } else {
      const std::string copy = copy_with_mode(dir, 0755);
      REQUIRE(::chown(copy.c_str(), 4242, 4242) == 0);
      REQUIRE_THROWS_WITH(load_sync_plugin(copy),
                          Contains("refusing '" + copy + "'") && Contains("belongs to user 4242"));
    }
  }
  CHECK(names() == before);  // nothing refused left a strategy behind
  fs::remove_all(dir);
}
