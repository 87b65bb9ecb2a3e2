// Stray TCP connections to the Gloo ports ranks publish during rendezvous (Note [Stray
// connections] in dist/gloo/gloo_mesh.cpp, Note [Mesh attempts] in gloo_mesh_attempts.cpp).
// A stray connects to every port of the first mesh attempt, so it takes a place in every
// pair (one side of each pair listens): silent, or sending bytes that are not Gloo's. The
// group must form anyway on the next attempt, with the right all_reduce sum, 2 and 3 ranks,
// and the rank that accepted the stray names its address in a warning. A stray on every
// attempt ends rendezvous within its timeout with a message that says what happened.
// The test's store holds back each gated attempt's addresses from the ranks until the stray
// has connected (GatedStore), so the stray always comes first.
#include <arpa/inet.h>
#include <gloo/transport/tcp/address.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include <ddl/dist/dist.h>
#include <ddl/dist/gloo/gloo_mesh.h>
#include <ddl/dist/store/socket.h>
#include <ddl/tensor/core/factory.h>

using namespace ddl;
using namespace ddl::dist;
using test::contains;

namespace {

// The attempt number of a Gloo address key ("mesh/<a>/<rank>"), or -1 for other keys.
int gloo_key_attempt(const std::string& key) {
  static const std::regex kGlooKey("mesh/([0-9]+)/[0-9]+");
  std::smatch m;
  return std::regex_match(key, m, kGlooKey) ? std::stoi(m[1]) : -1;
}

// The ranks' store: Gloo's address keys of attempts below `gated` stay invisible until the
// stray has connected to that attempt's ports ("stray/<a>" set by the test process).
class GatedStore final : public Store {
 public:
  using Store::get;
  using Store::wait;
  GatedStore(std::shared_ptr<Store> base, int gated) : Store(base->timeout()), base_(std::move(base)), gated_(gated) {}
  void set(const std::string& k, const std::string& v) override { base_->set(k, v); }
  std::string get(const std::string& k, Millis t) override {
    if (held(k)) base_->wait({gate(k)}, t);
    return base_->get(k, t);
  }
  int64_t add(const std::string& k, int64_t d) override { return base_->add(k, d); }
  bool check(const std::vector<std::string>& ks) override {
    for (const auto& k : ks)
      if (held(k) && !base_->check({gate(k)})) return false;
    return base_->check(ks);
  }
  void wait(const std::vector<std::string>& ks, Millis t) override {
    for (const auto& k : ks)
      if (held(k)) base_->wait({gate(k)}, t);
    base_->wait(ks, t);
  }

 private:
  bool held(const std::string& k) const {
    const int a = gloo_key_attempt(k);
    return a >= 0 && a < gated_;
  }
  static std::string gate(const std::string& k) { return "stray/" + std::to_string(gloo_key_attempt(k)); }
  std::shared_ptr<Store> base_;
  int gated_;
};

// The stray: for attempts 0 .. attempts-1, connects to every port every rank published
// (all of Gloo's address entries) and, when `garbage`, writes bytes that are not Gloo's.
// Keeps the connections open until `done`; returns the local ends of its connections.
// It runs on a thread, so it throws nothing: an exception there would be std::terminate.
// A refused port is no error: a rank that reached its deadline has closed its ports, and a
// busy machine can delay this thread past that (the last test case's ranks always do).
std::vector<std::string> run_stray(int port, int world, int attempts, bool garbage, const std::atomic<bool>& done,
                                   std::string* error) {
  std::vector<int> fds;
  std::vector<std::string> ends;
  try {
    auto store = test::store_client(port, Millis(30000));
    for (int a = 0; a < attempts && !done; ++a) {
      std::vector<std::string> keys;
      for (int r = 0; r < world; ++r) keys.push_back("mesh/" + std::to_string(a) + "/" + std::to_string(r));
      while (!done && !store->check(keys)) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (done) break;
      for (const auto& k : keys) {
        const std::string all = store->get(k, Millis(0));
        const size_t entry = all.size() / (world - 1);
        for (size_t at = 0; at + entry <= all.size(); at += entry) {
          const gloo::transport::tcp::Address addr(std::vector<char>(all.begin() + at, all.begin() + at + entry));
          const int p = ntohs(reinterpret_cast<const sockaddr_in&>(addr.getSockaddr()).sin_port);
          int fd = -1;
          try {
            fd = dist::detail::tcp_connect("127.0.0.1", p, dist::detail::Clock::now() + Millis(1000));
          } catch (const Error&) {  // refused: that rank gave up this attempt and closed the port
            continue;
          }
          ends.push_back(dist::detail::local_address(fd));
          // What a port scanner or an HTTP health check sends (never a Gloo opcode). The rank
          // may have closed the port since: no SIGPIPE, and a failed send is no error.
          const std::string junk = "GET /health HTTP/1.1\r\nHost: gloo\r\nUser-Agent: stray/1.0\r\n\r\n";
          if (garbage) (void)::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
          fds.push_back(fd);
        }
      }
      store->set("stray/" + std::to_string(a), "1");
    }
  } catch (const std::exception& e) {
    *error = e.what();
  }
  while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  for (int fd : fds) close(fd);
  return ends;
}

// Stops and joins the stray however the test case ends (a joinable thread destroyed by
// a failed REQUIRE would be std::terminate).
struct StrayThread {
  std::atomic<bool> done{false};
  std::thread thread;
  void stop() {
    done = true;
    if (thread.joinable()) thread.join();
  }
  ~StrayThread() { stop(); }
};

struct RankResult {
  std::string error;   // "" when the group formed and the sum was right
  std::string logged;  // what the rank's stderr got while forming the group
  double seconds = 0;
};

// One job of `world` ranks against a stray on the first `stray_attempts` attempts.
std::vector<RankResult> job_with_stray(int world, int stray_attempts, bool garbage, Millis timeout,
                                       std::vector<std::string>* stray_ends) {
  test::ParentStoreServer server;
  const int port = server.port();
  std::vector<std::string> ends;
  std::string stray_error;
  StrayThread stray;
  if (!test::is_rank_process())
    stray.thread =
        std::thread([&] { ends = run_stray(port, world, stray_attempts, garbage, stray.done, &stray_error); });
  auto outs = test::run_processes(
      world,
      [&](int rank) {
        auto base = test::store_client(port, Millis(30000));
        auto store = std::make_shared<GatedStore>(base, stray_attempts);
        // This rank's stderr, to see the warning.
        char path[] = "/tmp/ddl-stray-stderr-XXXXXX";
        const int log = mkstemp(path);
        const int saved = dup(2);
        dup2(log, 2);
        std::string error;
        const auto t0 = std::chrono::steady_clock::now();
        try {
          ProcessGroupGloo pg(store, rank, world, test::gloo_options(timeout, 0));
          Tensor t = full({4}, double(rank + 1));
          pg.all_reduce(t);
          const float want = world * (world + 1) / 2.0f;
          for (int64_t i = 0; i < 4; ++i)
            if (t.data<float>()[i] != want) error = "sum " + std::to_string(t.data<float>()[i]);
        } catch (const Error& e) {
          error = e.what();
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        dup2(saved, 2);
        std::ifstream f(path);
        std::stringstream text;
        text << f.rdbuf();
        unlink(path);
        base->set("result/" + std::to_string(rank), error);
        base->set("stderr/" + std::to_string(rank), text.str());
        base->set("seconds/" + std::to_string(rank), std::to_string(s));
      },
      60);
  std::vector<RankResult> results;
  if (test::is_rank_process()) return results;  // a rank of a later job passes through this one
  stray.stop();
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
  INFO("the stray: " + stray_error);
  REQUIRE(stray_error.empty());
  auto store = test::store_client(port, Millis(5000));
  for (int r = 0; r < world; ++r)
    results.push_back({store->get("result/" + std::to_string(r)), store->get("stderr/" + std::to_string(r)),
                       std::stod(store->get("seconds/" + std::to_string(r)))});
  *stray_ends = ends;
  return results;
}

std::string show(const std::vector<RankResult>& rs, const std::vector<std::string>& ends) {
  std::string s = "stray connected from:";
  for (const auto& e : ends) s += " " + e;
  for (size_t r = 0; r < rs.size(); ++r)
    s += "\nrank " + std::to_string(r) + " (" + std::to_string(rs[r].seconds) +
         " s): " + (rs[r].error.empty() ? "ok" : rs[r].error) + "\n  logged: " + rs[r].logged;
  return s;
}

// The group formed on a later attempt, and some rank warned, naming one of the stray's ends.
void check_recovered(const std::vector<RankResult>& rs, const std::vector<std::string>& ends) {
  INFO(show(rs, ends));
  REQUIRE(!ends.empty());
  int warned = 0;
  for (const auto& r : rs) {
    CHECK(r.error.empty());
    if (!contains(r.logged, "warning: a connection not from a rank of this job took")) continue;
    ++warned;
    CHECK(contains(r.logged, "rebuilds the mesh on new ports"));
    bool named = false;
    for (const auto& e : ends) named |= contains(r.logged, e);
    CHECK(named);
    // Once, even though the stray took more than one place.
    CHECK(r.logged.find("warning:") == r.logged.rfind("warning:"));
  }
  CHECK(warned >= 1);
}

}  // namespace

TEST_CASE("rendezvous: a silent stray connection to the Gloo ports, 2 ranks: the mesh is rebuilt", "[dist]") {
  std::vector<std::string> ends;
  const auto rs = job_with_stray(2, 1, /*garbage=*/false, Millis(20000), &ends);
  if (!test::is_rank_process()) check_recovered(rs, ends);
}

TEST_CASE("rendezvous: a stray that sends bytes that are not Gloo's, 2 ranks: the mesh is rebuilt", "[dist]") {
  std::vector<std::string> ends;
  const auto rs = job_with_stray(2, 1, /*garbage=*/true, Millis(20000), &ends);
  if (!test::is_rank_process()) check_recovered(rs, ends);
}

TEST_CASE("rendezvous: stray connections in every pair of 3 ranks: the mesh is rebuilt", "[dist]") {
  std::vector<std::string> ends;
  const auto rs = job_with_stray(3, 1, /*garbage=*/true, Millis(20000), &ends);
  if (!test::is_rank_process()) check_recovered(rs, ends);
}

TEST_CASE("rendezvous: a stray on every attempt ends within the timeout, saying so", "[dist]") {
  std::vector<std::string> ends;
  const auto rs = job_with_stray(2, 1000, /*garbage=*/false, Millis(4000), &ends);
  if (test::is_rank_process()) return;
  INFO(show(rs, ends));
  for (const auto& r : rs) {
    CHECK(contains(r.error, "could not connect to the other 1 rank(s) within 4000 ms"));
    CHECK(contains(r.error, "attempt(s) to form the mesh failed"));
    CHECK(r.seconds < 4.0 + 2.0);  // the deadline, and one last store poll or handshake bound
  }
  // The rank that accepted a stray says whose place it took, in its error and its warning.
  bool named = false;
  for (const auto& r : rs) named |= contains(r.error, "connections not from a rank took ranks' places");
  CHECK(named);
}

TEST_CASE("rendezvous: an address in Gloo's message matches only as a whole token", "[dist]") {
  using dist::detail::mentions_address;
  CHECK(mentions_address("Connection refused [127.0.0.1]:4087", "[127.0.0.1]:4087"));
  CHECK(mentions_address("Read error [127.0.0.1]:4087: Connection reset by peer", "[127.0.0.1]:4087"));
  CHECK_FALSE(mentions_address("Connection refused [127.0.0.1]:40873", "[127.0.0.1]:4087"));
  // Found later in the text after a longer port first.
  CHECK(mentions_address("[127.0.0.1]:40873 then [127.0.0.1]:4087,", "[127.0.0.1]:4087"));
  CHECK_FALSE(mentions_address("peer 10.0.0.1:4087", "0.0.0.1:4087"));
  CHECK_FALSE(mentions_address("anything", ""));
}
