// The whole rendezvous (connecting to the store, its HELLO, Gloo's exchange through it) ends
// by one deadline, the job's timeout from init_process_group's call: a store that is late,
// slow or stalled must not let each step wait its own full timeout. Real sockets on
// 127.0.0.1: a listener that accepts and never answers, one that answers HELLO and then
// stalls, one that appears late. Bounds are the timeout plus a generous margin.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <thread>

#include <ddl/dist/dist.h>
#include <ddl/dist/store/socket.h>
#include <ddl/dist/store/store_wire.h>
#include <ddl/dist/store/torch_store.h>

using namespace ddl::dist;

using Catch::Contains;
using ddl::dist::detail::Clock;
namespace detail = ddl::dist::detail;

namespace {

constexpr auto kTimeout = std::chrono::seconds(3);

// A fake store on 127.0.0.1: after `late` it listens; each connection waits `hello_after`,
// answers one request with "ok" when `answer_hello` (the ddl store's HELLO reply) and then
// reads and never answers again, until the test ends.
class StallingStore {
 public:
  StallingStore(Millis late, Millis hello_after, bool answer_hello) {
    port_ = ddl::dist::detail::find_free_port();
    thread_ = std::thread([=, this] {
      std::this_thread::sleep_for(late);
      int bound = 0;
      const int lfd = ddl::dist::detail::tcp_listen("127.0.0.1", port_, &bound);
      std::vector<int> fds;
      while (!stop_) {
        timeval tv{0, 50'000};
        setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        const int fd = accept(lfd, nullptr, nullptr);
        if (fd < 0) continue;
        fds.push_back(fd);
        std::this_thread::sleep_for(hello_after);
        if (answer_hello) try {
            char head[4];
            if (!ddl::dist::detail::recv_all(fd, head, 4, Clock::now() + std::chrono::seconds(2))) continue;
            std::string body(ddl::dist::detail::decode_frame_length(head), '\0');
            ddl::dist::detail::recv_all(fd, body.data(), body.size(), Clock::now() + std::chrono::seconds(2));
            const std::string ok =
                ddl::dist::detail::WireWriter().u8(uint8_t(ddl::dist::detail::Status::Ok)).str("").frame();
            ddl::dist::detail::send_all(fd, ok.data(), ok.size());
          } catch (const std::exception&) {  // the client gave up first
          }
      }
      for (int fd : fds) close(fd);
      close(lfd);
    });
  }
  ~StallingStore() {
    stop_ = true;
    thread_.join();
  }
  int port() const { return port_; }

 private:
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Seconds init_process_group took to fail as rank 1 of 2 against the store at `port`.
double init_fails_after(int port, std::string* message) {
  setenv("DDL_JOB_TOKEN", "test-token", 1);
  InitOptions o;
  o.init_method = "tcp://127.0.0.1:" + std::to_string(port);
  o.rank = 1;
  o.world_size = 2;
  o.timeout = kTimeout;
  const auto t0 = Clock::now();
  try {
    init_process_group("gloo", o);
    destroy_process_group();
    *message = "(connected)";
  } catch (const std::exception& e) {
    *message = e.what();
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

TEST_CASE("rendezvous deadline: a store that answers HELLO and then stalls", "[dist]") {
  StallingStore store(Millis(0), Millis(0), true);
  std::string msg;
  const double s = init_fails_after(store.port(), &msg);
  INFO(msg << " after " << s << " s");
  // The stalled request is named, not only the later requests that found the connection gone.
  CHECK_THAT(msg, Contains("set(") && Contains("no reply"));
  CHECK(s < 3.0 + 2.0);
}

TEST_CASE("rendezvous deadline: a slow HELLO and then a stall share one deadline", "[dist]") {
  StallingStore store(Millis(0), Millis(2000), true);
  std::string msg;
  const double s = init_fails_after(store.port(), &msg);
  INFO(msg << " after " << s << " s");
  CHECK(s < 3.0 + 1.5);
}

TEST_CASE("rendezvous deadline: a store that appears late and never answers", "[dist]") {
  StallingStore store(Millis(2000), Millis(0), false);
  std::string msg;
  const double s = init_fails_after(store.port(), &msg);
  INFO(msg << " after " << s << " s");
  CHECK_THAT(msg, Contains("127.0.0.1:" + std::to_string(store.port())) && Contains("HELLO"));
  CHECK(s < 3.0 + 1.5);
}

TEST_CASE("rendezvous deadline: a PyTorch store that appears late and never answers", "[dist][torch_store]") {
  StallingStore store(Millis(2500), Millis(0), false);
  const auto t0 = Clock::now();
  std::string msg;
  try {
    TorchStore s("127.0.0.1", store.port(), kTimeout);
  } catch (const std::exception& e) {
    msg = e.what();
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(msg << " after " << s << " s");
  CHECK_THAT(msg, Contains("no reply"));
  CHECK(s < 3.0 + 1.5);
}

TEST_CASE("rendezvous deadline: with torchrun's agent store, the late store and Gloo share it", "[dist][torch_store]") {
  StallingStore store(Millis(0), Millis(2000), true);  // the HELLO-sized reply is no PyTorch answer
  setenv("TORCHELASTIC_USE_AGENT_STORE", "True", 1);
  std::string msg;
  const double s = init_fails_after(store.port(), &msg);
  unsetenv("TORCHELASTIC_USE_AGENT_STORE");
  INFO(msg << " after " << s << " s");
  CHECK(s < 3.0 + 1.5);
}
