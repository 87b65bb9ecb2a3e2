// TorchStore, the client of PyTorch's TCPStore: its requests byte for byte as PyTorch 1.13
// encodes them, and its behaviour against a scripted peer (replies, a timed-out wait that
// reopens the connection, a refused connection, a reply that is not PyTorch's, a peer that
// goes away). Against PyTorch's real store and torchrun: tests/apps/test_torchrun.sh.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <functional>
#include <thread>

#include <ddl/base/error.h>
#include <ddl/dist/store/socket.h>
#include <ddl/dist/store/torch_store.h>

using namespace ddl::dist;
using Catch::Contains;
using ddl::dist::detail::Clock;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}
std::string len8(int n) { return bytes({n, 0, 0, 0, 0, 0, 0, 0}); }

// A one-thread peer that plays a script: expect(exact request bytes), reply(bytes),
// accept() the next connection. Mismatches are collected (Catch2 checks stay on the test thread).
class ScriptedPeer {
 public:
  explicit ScriptedPeer(std::function<void(ScriptedPeer&)> script) {
    listen_fd_ = ddl::dist::detail::tcp_listen("127.0.0.1", 0, &port_);
    thread_ = std::thread([this, script] {
      try {
        accept();
        script(*this);
      } catch (const std::exception& e) {
        errors_.push_back(std::string("peer: ") + e.what());
      }
    });
  }
  ~ScriptedPeer() {
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) close(fd_);
    close(listen_fd_);
  }
  int port() const { return port_; }
  // Waits for the script to end; its mismatches.
  std::vector<std::string> finish() {
    if (thread_.joinable()) thread_.join();
    return errors_;
  }

  void accept() {
    if (fd_ >= 0) close(fd_);
    fd_ = ::accept(listen_fd_, nullptr, nullptr);
  }
  void expect(const std::string& want) {
    std::string got(want.size(), '\0');
    if (!ddl::dist::detail::recv_all(fd_, got.data(), got.size(), Clock::now() + std::chrono::seconds(5)) ||
        got != want)
      errors_.push_back("request " + std::to_string(++requests_) + " differs from the expected bytes");
  }
  void reply(const std::string& r) { ddl::dist::detail::send_all(fd_, r.data(), r.size()); }
  void hang_up() {
    close(fd_);
    fd_ = -1;
  }
  // True when the client closed this connection within 5 s.
  bool closed_by_client() {
    char c;
    try {
      ddl::dist::detail::recv_all(fd_, &c, 1, Clock::now() + std::chrono::seconds(5));
    } catch (const ddl::Error&) {
      return true;
    }
    return false;
  }
  void note(const std::string& e) { errors_.push_back(e); }

 private:
  int listen_fd_ = -1;
  int port_ = 0;
  int fd_ = -1;
  int requests_ = 0;
  std::vector<std::string> errors_;
  std::thread thread_;
};

const std::string kInit = bytes({3}) + len8(5) + "init/" + bytes({1, 0, 0, 0, 0, 0, 0, 0});

}  // namespace

TEST_CASE("torch store: requests are PyTorch 1.13's bytes", "[dist][torch_store]") {
  // QueryType SET = 0, then u64 length-prefixed key and value.
  CHECK(ddl::dist::detail::torch_set_request("/a", "xy") ==
        bytes({0, 2, 0, 0, 0, 0, 0, 0, 0, '/', 'a', 2, 0, 0, 0, 0, 0, 0, 0, 'x', 'y'}));
  CHECK(ddl::dist::detail::torch_set_request("/k", "") == bytes({0}) + len8(2) + "/k" + len8(0));
  // GET = 2, key.
  CHECK(ddl::dist::detail::torch_get_request("/key") == bytes({2, 4, 0, 0, 0, 0, 0, 0, 0, '/', 'k', 'e', 'y'}));
  // ADD = 3, key, i64 delta in two's complement little-endian.
  CHECK(ddl::dist::detail::torch_add_request("/n", 5) == bytes({3}) + len8(2) + "/n" + bytes({5, 0, 0, 0, 0, 0, 0, 0}));
  CHECK(ddl::dist::detail::torch_add_request("/n", -2) ==
        bytes({3}) + len8(2) + "/n" + bytes({0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  CHECK(ddl::dist::detail::torch_add_request("init/", 1) == kInit);
  // CHECK = 4 and WAIT = 5: u64 key count, then the keys.
  CHECK(ddl::dist::detail::torch_check_request({"/a", "/bc"}) ==
        bytes({4}) + len8(2) + len8(2) + "/a" + len8(3) + "/bc");
  CHECK(ddl::dist::detail::torch_wait_request({"/a"}) == bytes({5}) + len8(1) + len8(2) + "/a");
  CHECK(ddl::dist::detail::torch_wait_request({}) == bytes({5}) + len8(0));
  // Replies: u64 lengths and i64 counters, little-endian.
  CHECK(ddl::dist::detail::torch_decode_u64(bytes({0x34, 0x12, 0, 0, 0, 0, 0, 1}).data()) == 0x0100000000001234ull);
  CHECK(int64_t(ddl::dist::detail::torch_decode_u64(bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}).data())) ==
        -1);
}

TEST_CASE("torch store: set, get, add, check and wait against a scripted PyTorch peer", "[dist][torch_store]") {
  ScriptedPeer peer([](ScriptedPeer& p) {
    p.expect(kInit);  // PyTorch's clients count themselves in "init/" on connect
    p.reply(bytes({1, 0, 0, 0, 0, 0, 0, 0}));
    p.expect(ddl::dist::detail::torch_set_request("/a", std::string("x\0y", 3)));  // SET has no reply
    p.expect(ddl::dist::detail::torch_wait_request({"/a"}));                       // get = WAIT, then GET
    p.reply(bytes({0}));                                                           // STOP_WAITING
    p.expect(ddl::dist::detail::torch_get_request("/a"));
    p.reply(len8(3) + std::string("x\0y", 3));
    p.expect(ddl::dist::detail::torch_check_request({"/a", "/b"}));
    p.reply(bytes({1}));  // NOT_READY
    p.expect(ddl::dist::detail::torch_check_request({"/a"}));
    p.reply(bytes({0}));  // READY
    p.expect(ddl::dist::detail::torch_add_request("/n", 5));
    p.reply(bytes({5, 0, 0, 0, 0, 0, 0, 0}));
    p.expect(ddl::dist::detail::torch_wait_request({"/a", "/late"}));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    p.reply(bytes({0}));
    // A wait that times out: no reply; the client must hang up (a late STOP_WAITING would
    // otherwise be read as the next reply) and reconnect for its next call.
    p.expect(ddl::dist::detail::torch_wait_request({"/never"}));
    if (!p.closed_by_client()) p.note("the client kept the connection after a timed-out wait");
    p.accept();
    p.expect(ddl::dist::detail::torch_add_request("/n", 0));
    p.reply(bytes({5, 0, 0, 0, 0, 0, 0, 0}));
  });
  const std::string where = "127.0.0.1:" + std::to_string(peer.port());
  {
    TorchStore s("127.0.0.1", peer.port(), Millis(3000));
    s.set("a", std::string("x\0y", 3));
    CHECK(s.get("a") == std::string("x\0y", 3));
    CHECK_FALSE(s.check({"a", "b"}));
    CHECK(s.check({"a"}));
    CHECK(s.add("n", 5) == 5);
    s.wait({"a", "late"}, Millis(2000));
    const auto t0 = Clock::now();
    REQUIRE_THROWS_WITH(s.get("never", Millis(300)),
                        Contains("never") && Contains(where) && Contains("timed out after 300 ms"));
    const auto dt = Clock::now() - t0;
    CHECK(dt >= Millis(290));  // poll() counts whole milliseconds
    CHECK(dt < Millis(2000));
    CHECK(s.add("n", 0) == 5);
  }
  for (const auto& e : peer.finish()) FAIL(e);
}

TEST_CASE("torch store: no server, a foreign reply, a peer that leaves", "[dist][torch_store]") {
  SECTION("nobody listens: the connect gives up at the timeout, naming the address") {
    const int port = ddl::dist::detail::find_free_port();
    const auto t0 = Clock::now();
    REQUIRE_THROWS_WITH(TorchStore("127.0.0.1", port, Millis(300)),
                        Contains("127.0.0.1:" + std::to_string(port)) && Contains("PyTorch TCPStore"));
    CHECK(Clock::now() - t0 < Millis(3000));
  }
  SECTION("a reply byte PyTorch never sends is an error, and the connection is not reused") {
    ScriptedPeer peer([](ScriptedPeer& p) {
      p.expect(kInit);
      p.reply(bytes({1, 0, 0, 0, 0, 0, 0, 0}));
      p.expect(ddl::dist::detail::torch_check_request({"/k"}));
      p.reply(bytes({7}));
    });
    TorchStore s("127.0.0.1", peer.port(), Millis(2000));
    REQUIRE_THROWS_WITH(s.check({"k"}), Contains("unexpected reply byte 7") && Contains("PyTorch"));
    REQUIRE_THROWS_WITH(s.add("k", 1), Contains("lost"));
    for (const auto& e : peer.finish()) FAIL(e);
  }
  SECTION("the peer hangs up: the call fails at once, naming the key and address") {
    ScriptedPeer peer([](ScriptedPeer& p) {
      p.expect(kInit);
      p.reply(bytes({1, 0, 0, 0, 0, 0, 0, 0}));
      p.expect(ddl::dist::detail::torch_wait_request({"/k"}));
      p.hang_up();
    });
    TorchStore s("127.0.0.1", peer.port(), Millis(5000));
    const auto t0 = Clock::now();
    REQUIRE_THROWS_WITH(s.get("k"), Contains("get(k)") && Contains("127.0.0.1:" + std::to_string(peer.port())));
    CHECK(Clock::now() - t0 < Millis(3000));
    for (const auto& e : peer.finish()) FAIL(e);
  }
}
