// DDP's bucket sizes from DDL_BUCKET_CAP_MB and DDL_FIRST_BUCKET_MB (dist/ddp/ddp_env.h):
// parsed strictly, refused naming the variable, and the "ddp" sync strategy builds the
// buckets they ask for: the layout DDP makes when given the same sizes directly.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>

#include "tests/common/dist_fixtures.h"
#include "tests/common/error_of.h"
#include "tests/common/harness.h"
#include "tests/common/small_cnn.h"
#include <ddl/ddl.h>
#include <ddl/dist/ddp/ddp_env.h>
#include <ddl/dist/dist.h>

using namespace ddl;
using namespace ddl::dist;

namespace {
// Sets (or, with nullptr, unsets) both variables for one scope.
struct BucketEnv {
  BucketEnv(const char* cap, const char* first) {
    set(kBucketCapEnv, cap);
    set(kFirstBucketEnv, first);
  }
  ~BucketEnv() {
    unsetenv(kBucketCapEnv);
    unsetenv(kFirstBucketEnv);
  }
  static void set(const char* name, const char* v) {
    if (v)
      setenv(name, v, 1);
    else
      unsetenv(name);
  }
};
}  // namespace

TEST_CASE("ddp_options_from_env: the variables override the defaults; bad values are refused by name", "[dist][ddp]") {
  {
    BucketEnv env(nullptr, nullptr);
    const DDPOptions d = ddp_options_from_env();
    CHECK(d.bucket_cap_mb == 25);
    CHECK(d.first_bucket_mb == 1);
  }
  {
    BucketEnv env("0.5", "1e-3");
    const DDPOptions d = ddp_options_from_env({.broadcast_buffers = false});
    CHECK(d.bucket_cap_mb == 0.5);
    CHECK(d.first_bucket_mb == 0.001);
    CHECK_FALSE(d.broadcast_buffers);  // the rest of `base` is kept
  }
  {
    BucketEnv env("", "");  // empty: unset
    CHECK(ddp_options_from_env().bucket_cap_mb == 25);
  }
  for (const char* bad : {"0", "-1", "nan", "inf", "abc", "2x", " ", "1e300", "2000000"}) {
    INFO(bad);
    {
      BucketEnv env(bad, nullptr);
      const std::string e = test::error_of([] { (void)ddp_options_from_env(); });
      CHECK(e.find(std::string("DDL_BUCKET_CAP_MB=") + bad + ": a bucket size is a number of MiB above 0") == 0);
    }
    BucketEnv env(nullptr, bad);
    CHECK(test::error_of([] { (void)ddp_options_from_env(); }).find("DDL_FIRST_BUCKET_MB=") == 0);
  }
  double mb = 7;
  CHECK(parse_bucket_mb("--bucket-cap-mb", "0.25", mb).empty());
  CHECK(mb == 0.25);
  CHECK_FALSE(parse_bucket_mb("--bucket-cap-mb", "-0.25", mb).empty());
  CHECK(mb == 0.25);  // left as it was
}

TEST_CASE("the ddp strategy's buckets follow DDL_BUCKET_CAP_MB and DDL_FIRST_BUCKET_MB", "[dist][ddp]") {
  test::ParentStoreServer server;
  const int port = server.port();
  auto outs = test::run_processes(2, [&](int rank) {
    auto pg = test::gloo_group(port, rank, 2);
    const auto layout = [&](const char* cap, const char* first) {
      BucketEnv env(cap, first);
      auto s = make_sync_strategy("ddp", test::make_small_cnn(), pg);
      return dynamic_cast<DistributedDataParallel&>(s->model()).stats().bucket_bytes;
    };
    const auto direct = [&](double cap, double first) {
      DistributedDataParallel ddp(test::make_small_cnn(), pg, {.bucket_cap_mb = cap, .first_bucket_mb = first});
      return ddp.stats().bucket_bytes;
    };
    const auto defaults = layout(nullptr, nullptr);
    const auto small = layout("0.002", "0.0005");
    DIST_EXPECT(defaults == direct(25, 1), "defaults: not DDPOptions{}'s layout");
    DIST_EXPECT(small == direct(0.002, 0.0005), "DDL_*_MB: not the layout DDP makes with the same sizes");
    DIST_EXPECT(small.size() > defaults.size(), "small buckets: ", small.size(), " buckets, default ", defaults.size());
    DIST_EXPECT(layout(nullptr, "0.0005") == direct(25, 0.0005), "DDL_FIRST_BUCKET_MB alone");
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}

TEST_CASE("DistributedDataParallel refuses a bucket size that is not above 0 and finite", "[dist][ddp]") {
  test::ParentStoreServer server;
  const int port = server.port();
  auto outs = test::run_processes(1, [&](int rank) {
    auto pg = test::gloo_group(port, rank, 1);
    for (double bad : {0.0, -1.0, double(NAN), double(INFINITY)}) {
      const std::string e =
          test::error_of([&] { DistributedDataParallel ddp(test::make_small_cnn(), pg, {.bucket_cap_mb = bad}); });
      DIST_EXPECT(e.find("DistributedDataParallel: bucket_cap_mb: a bucket size is") == 0, "got: ", e);
      const std::string f =
          test::error_of([&] { DistributedDataParallel ddp(test::make_small_cnn(), pg, {.first_bucket_mb = bad}); });
      DIST_EXPECT(f.find("DistributedDataParallel: first_bucket_mb: a bucket size is") == 0, "got: ", f);
    }
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}
