// A rank refused for its job token must not leave the others waiting out their timeout:
// the store fails every wait with a message that says the token is the problem and names
// the rank and host that presented it (Note [Refused ranks] in dist/store/store_server.cpp).
// The same across real processes: tests/dist/test_token_mismatch.sh.
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <string>

#include "tests/common/dist_fixtures.h"
#include <ddl/base/error.h>
#include <ddl/dist/store/tcp_store.h>

using namespace ddl::dist;
using Catch::Contains;
using ddl::test::seconds_since;

namespace {

TCPStoreOptions client(const std::string& token, const std::string& who) {
  TCPStoreOptions o;
  o.timeout = Millis(60000);  // a refusal noticed only at the timeout shows as a failure below
  o.token = token;
  o.who = who;
  return o;
}

}  // namespace

TEST_CASE("token refusal: a waiting rank fails within seconds, naming the refused rank and host", "[dist]") {
  TCPStoreServer server("127.0.0.1", 0, "right");
  TCPStore good("127.0.0.1", server.port(), client("right", "rank 0 on host hA"));
  const auto t0 = std::chrono::steady_clock::now();
  auto waiting = std::async(std::launch::async, [&] { good.wait({"rank1/address"}, Millis(60000)); });
  std::this_thread::sleep_for(Millis(200));
  REQUIRE_THROWS_WITH(TCPStore("127.0.0.1", server.port(), client("wrong", "rank 1 on host hB")),
                      Contains("job token"));
  REQUIRE(waiting.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  REQUIRE_THROWS_WITH(waiting.get(), Contains("job token") && Contains("rank 1 on host hB"));
  CHECK(seconds_since(t0) < 5);
  CHECK_THAT(server.refused_peer(), Contains("rank 1 on host hB") && Contains("127.0.0.1:"));
  // A rank that comes later is told too, at its first wait, not after its timeout.
  TCPStore late("127.0.0.1", server.port(), client("right", "rank 2 on host hC"));
  const auto t1 = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(late.get("rank1/address", Millis(60000)), Contains("rank 1 on host hB"));
  CHECK(seconds_since(t1) < 5);
}

TEST_CASE("token refusal: a client with no token names itself too", "[dist]") {
  TCPStoreServer server("127.0.0.1", 0, "right");
  TCPStore good("127.0.0.1", server.port(), client("right", "rank 0 on host hA"));
  REQUIRE_THROWS_WITH(TCPStore("127.0.0.1", server.port(), client("", "rank 3 on host hD")), Contains("job token"));
  REQUIRE_THROWS_WITH(good.wait({"x"}, Millis(60000)), Contains("rank 3 on host hD") && Contains("no job token"));
}
