// Rendezvous stores: HashStore, FileStore and TCPStore share one behavioural test
// (set/get/add/check/wait, blocking gets, timeouts); TCPStore also faces malformed
// messages, wrong job tokens and a dying server, and binds only the address it is given;
// the Gloo adapter honours timeouts.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <ddl/base/error.h>
#include <ddl/dist/gloo/gloo_collectives.h>
#include <ddl/dist/gloo/process_group_gloo.h>
#include <ddl/dist/store/file_store.h>
#include <ddl/dist/store/socket.h>
#include <ddl/dist/store/store_wire.h>
#include <ddl/dist/store/tcp_store.h>

using ddl::Error;
using namespace ddl::dist;
using Catch::Contains;

namespace {

// The contract every store keeps. `other` is a second handle on the same store (another
// client), so blocking calls are satisfied by a different connection.
void check_store(Store& s, Store& other) {
  s.set("a", "1");
  CHECK(s.get("a") == "1");
  CHECK(other.get("a") == "1");
  s.set("bin", std::string("x\0y", 3));
  CHECK(other.get("bin") == std::string("x\0y", 3));
  CHECK(s.check({"a", "bin"}));
  CHECK_FALSE(s.check({"a", "missing"}));
  CHECK(s.add("n", 5) == 5);
  CHECK(other.add("n", -2) == 3);
  REQUIRE_THROWS_WITH(s.add("a", 1) + s.add("bin", 1), Contains("not an integer"));

  // A blocking get returns once another client sets the key.
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    other.set("late", "here");
  });
  CHECK(s.get("late", Millis(5000)) == "here");
  setter.join();
  s.wait({"a", "late"}, Millis(100));

  // Timeouts name the key and fire on time.
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(s.get("never", Millis(200)), Contains("never") && Contains("timed out"));
  REQUIRE_THROWS_WITH(s.wait({"a", "never2"}, Millis(200)), Contains("never2"));
  auto dt = std::chrono::steady_clock::now() - t0;
  CHECK(dt >= std::chrono::milliseconds(400));
  CHECK(dt < std::chrono::milliseconds(3000));

  // add is atomic across clients.
  std::vector<std::thread> adders;
  for (int k = 0; k < 4; ++k)
    adders.emplace_back([&, k] {
      for (int i = 0; i < 50; ++i) (k % 2 ? s : other).add("counter", 1);
    });
  for (auto& t : adders) t.join();
  CHECK(s.get("counter") == "200");
}

std::string temp_dir() {
  char tmpl[] = "/tmp/ddl_filestore_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

// The server's reply to a good HELLO: length 5, status Ok, empty string.
constexpr size_t kHelloReply = 4 + 1 + 4;

// Sends raw bytes to the server as a client would, returns whether the server hung up
// (after `skip` bytes of expected replies).
bool server_hangs_up_after(int port, const std::string& bytes, size_t skip = 0) {
  int fd = ddl::dist::detail::tcp_connect("127.0.0.1", port, ddl::dist::detail::Clock::now() + std::chrono::seconds(5));
  ddl::dist::detail::send_all(fd, bytes.data(), bytes.size());
  std::string buf(skip + 1, '\0');
  bool closed = false;
  try {
    // Either the server answers (it should not) or closes the connection (it should).
    ddl::dist::detail::recv_all(fd, buf.data(), skip + 1, ddl::dist::detail::Clock::now() + std::chrono::seconds(5));
  } catch (const Error&) {
    closed = true;
  }
  close(fd);
  return closed;
}

std::string hello(const std::string& token) {
  return ddl::dist::detail::WireWriter()
      .u8(1)
      .u32(ddl::dist::detail::kWireMagic)
      .u32(ddl::dist::detail::kWireVersion)
      .str(token)
      .frame();
}

// An IPv4 address of this machine other than loopback ("" when it has none).
std::string other_local_ipv4() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* a = list; a && found.empty(); a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !(a->ifa_flags & IFF_UP) || (a->ifa_flags & IFF_LOOPBACK))
      continue;
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, ip, sizeof ip);
    if (std::string(ip).rfind("127.", 0) != 0) found = ip;
  }
  freeifaddrs(list);
  return found;
}

// One connection attempt, no retries.
bool can_connect(const std::string& host, int port) {
  try {
    close(ddl::dist::detail::tcp_connect(host, port, ddl::dist::detail::Clock::now()));
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

TEST_CASE("store: the server binds the address it is given, and only that one", "[dist]") {
  TCPStoreServer local("127.0.0.1", 0);
  const std::string port = std::to_string(local.port());
  CHECK(local.address() == "127.0.0.1:" + port);
  CHECK(can_connect("127.0.0.1", local.port()));
  // Every interface, as ddlrun's node 0 does without --master-addr (so it needs a token).
  TCPStoreServer all("0.0.0.0", 0, "token");
  CHECK(all.address() == "0.0.0.0:" + std::to_string(all.port()));
  CHECK(can_connect("127.0.0.1", all.port()));

  // Another address of this machine: 127.0.0.2 always (Linux routes all of 127/8 to lo),
  // and an interface's own address where there is one.
  std::vector<std::string> others = {"127.0.0.2"};
  if (const std::string ip = other_local_ipv4(); !ip.empty()) others.push_back(ip);
  for (const std::string& other : others) {
    INFO("other local address: " << other);
    CHECK(can_connect(other, all.port()));
    CHECK_FALSE(can_connect(other, local.port()));
    // And the converse: bound to the other address, not reachable through 127.0.0.1.
    TCPStoreServer there(other, 0, "token");
    CHECK(there.address() == other + ":" + std::to_string(there.port()));
    CHECK(can_connect(other, there.port()));
    CHECK_FALSE(can_connect("127.0.0.1", there.port()));
  }
}

TEST_CASE("store: HashStore and PrefixStore", "[dist]") {
  auto base = std::make_shared<HashStore>();
  PrefixStore a("job", base);
  check_store(a, a);
  CHECK(base->check({"job/a"}));
  CHECK_FALSE(base->check({"a"}));
}

TEST_CASE("store: a counter that would overflow is an error, left unchanged", "[dist]") {
  HashStore s;
  const int64_t big = std::numeric_limits<int64_t>::max() - 1;
  CHECK(s.add("n", big) == big);
  CHECK_THROWS_WITH(s.add("n", 2), Catch::Contains("overflows") && Catch::Contains("add(n, 2)"));
  CHECK(s.add("n", 1) == big + 1);
  s.add("m", std::numeric_limits<int64_t>::min());
  CHECK_THROWS_WITH(s.add("m", -1), Catch::Contains("overflows"));
}

TEST_CASE("store: FileStore on a fresh directory", "[dist]") {
  std::string dir = temp_dir();
  FileStore s(dir), other(dir);
  check_store(s, other);
  std::filesystem::remove_all(dir);
}

TEST_CASE("store: TCPStore client and server", "[dist]") {
  TCPStoreOptions opts;
  opts.is_server = true;
  opts.timeout = Millis(5000);
  TCPStore s("127.0.0.1", 0, opts);  // port 0: the server picks a free port
  REQUIRE(s.port() > 0);
  opts.is_server = false;
  TCPStore other("127.0.0.1", s.port(), opts);
  check_store(s, other);
  CHECK(s.local_ip() == "127.0.0.1");
}

TEST_CASE("store: TCPStore rejects malformed messages and keeps serving", "[dist]") {
  TCPStoreServer server("127.0.0.1", 0);
  const int port = server.port();
  // Not a ddl client at all.
  CHECK(server_hangs_up_after(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  // A frame claiming 4 GiB.
  CHECK(server_hangs_up_after(port, std::string("\xff\xff\xff\xff", 4)));
  // A zero-length frame.
  CHECK(server_hangs_up_after(port, std::string("\0\0\0\0", 4)));
  // A good HELLO, then a SET whose key length runs past the end of its frame.
  std::string bad_set = ddl::dist::detail::WireWriter().u8(2).u32(1000).frame();
  CHECK(server_hangs_up_after(port, hello("") + bad_set, kHelloReply));
  // Trailing garbage after a well-formed GET.
  std::string trailing = ddl::dist::detail::WireWriter().u8(3).str("k").i64(10).u8(9).frame();
  CHECK(server_hangs_up_after(port, hello("") + trailing, kHelloReply));
  // An unknown opcode.
  CHECK(server_hangs_up_after(port, hello("") + ddl::dist::detail::WireWriter().u8(77).frame(), kHelloReply));
  CHECK(server.rejected_clients() == 6);
  // A real client is still served.
  TCPStoreOptions opts;
  opts.timeout = Millis(5000);
  TCPStore ok("127.0.0.1", port, opts);
  ok.set("k", "v");
  CHECK(ok.get("k") == "v");
}

TEST_CASE("store: wire reader checks every length", "[dist]") {
  std::string body = ddl::dist::detail::WireWriter().str("abc").u8(1).frame().substr(4);
  ddl::dist::detail::WireReader r(body.data(), body.size());
  CHECK(r.str(10) == "abc");
  REQUIRE_THROWS_AS(r.finish(), ddl::dist::detail::WireError);
  ddl::dist::detail::WireReader r2(body.data(), body.size());
  REQUIRE_THROWS_AS(r2.str(2), ddl::dist::detail::WireError);  // over the caller's limit
  ddl::dist::detail::WireReader r3(body.data(), 5);
  REQUIRE_THROWS_AS(r3.str(10), ddl::dist::detail::WireError);  // truncated
}

TEST_CASE("store: TCPStore job token", "[dist]") {
  TCPStoreServer server("127.0.0.1", 0, "s3cret");
  TCPStoreOptions opts;
  opts.timeout = Millis(3000);
  opts.token = "wrong";
  REQUIRE_THROWS_WITH(TCPStore("127.0.0.1", server.port(), opts), Contains("refused this rank's job token"));
  opts.token = "";
  REQUIRE_THROWS_WITH(TCPStore("127.0.0.1", server.port(), opts), Contains("DDL_JOB_TOKEN"));
  opts.token = "s3cret";
  TCPStore good("127.0.0.1", server.port(), opts);
  good.set("x", "1");
  CHECK(good.get("x") == "1");
  CHECK(server.rejected_clients() == 2);
}

TEST_CASE("store: a TCPStore client fails fast when the server goes away", "[dist]") {
  auto server = std::make_unique<TCPStoreServer>("127.0.0.1", 0);
  TCPStoreOptions opts;
  opts.timeout = Millis(60000);
  TCPStore client("127.0.0.1", server->port(), opts);
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    server.reset();
  });
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(client.get("never"), Contains("store: get(never)"));
  killer.join();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  REQUIRE_THROWS_WITH(client.set("a", "b"), Contains("connection"));
}

TEST_CASE("store: connecting to nobody times out with advice", "[dist]") {
  const int port = ddl::dist::detail::find_free_port();
  TCPStoreOptions opts;
  opts.timeout = Millis(300);
  REQUIRE_THROWS_WITH(TCPStore("127.0.0.1", port, opts), Contains("cannot connect") && Contains("MASTER_PORT"));
}

TEST_CASE("store: an unresolvable address is named with getaddrinfo's error, within seconds", "[dist]") {
  // Rank 0 serving the store used to report it as a missing job token (the address was
  // taken for a non-loopback one), and other ranks named no variable to check.
  TCPStoreOptions opts;
  opts.timeout = Millis(3000);
  const auto t0 = std::chrono::steady_clock::now();
  for (bool server : {true, false}) {
    opts.is_server = server;
    INFO("is_server " << server);
    try {
      TCPStore("no-such-host.invalid", 29500, opts);
      FAIL("connected");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK_THAT(what, Contains("cannot resolve") && Contains("'no-such-host.invalid'") && Contains("MASTER_ADDR"));
      CHECK_THAT(what, !Contains("token"));
    }
  }
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
}

TEST_CASE("store: a wrong-sized address in Gloo's rendezvous names the key, rank and store", "[dist]") {
  // Rank 1's address key holds 36 bytes where Gloo expects one 136-byte address: Gloo's own
  // check said only "enforce fail ... 136 vs 36".
  TCPStoreOptions so;
  so.timeout = Millis(3000);
  so.is_server = true;
  auto tcp = std::make_shared<TCPStore>("127.0.0.1", 0, so);
  auto store = std::make_shared<PrefixStore>("pg", tcp);
  store->set("mesh/0/1", std::string(36, 'x'));
  store->set("mesh/0/rank_1", "127.0.0.1");
  GlooOptions g;
  g.timeout = Millis(3000);
  g.shm = 0;
  try {
    ProcessGroupGloo pg(store, 0, 2, g);
    FAIL("connected");
  } catch (const ddl::Error& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Contains("'1'") && Contains("rank 1") && Contains("36 bytes") &&
                         Contains("127.0.0.1:" + std::to_string(tcp->port())));
    CHECK_THAT(what, !Contains("enforce fail"));
  }
}

TEST_CASE("store: the Gloo adapter honours wait timeouts", "[dist]") {
  auto store = std::make_shared<HashStore>(Millis(60000));
  ddl::dist::detail::GlooStoreAdapter adapter(store);
  adapter.set("k", {'a', 'b'});
  CHECK(adapter.get("k") == std::vector<char>{'a', 'b'});
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(adapter.wait({"k", "missing"}, Millis(100)), Contains("missing"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
}
