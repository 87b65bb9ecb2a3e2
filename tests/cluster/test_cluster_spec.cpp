// The emulator library (cluster/) on its own, without root or ddlrun: what --hosts, --link,
// --cpu, --memory and --link-flap values mean once parsed (cluster/spec.h,
// cluster/link_rate.h), and the UsageError each wrong value gets. Building the hosts needs
// root and is tested by the jobs of tests/hosts/.
#include <catch2/catch.hpp>
#include <string>

#include <ddl/cluster/link_rate.h>
#include <ddl/cluster/spec.h>

using ddl::cluster::Spec;
using ddl::cluster::UsageError;

TEST_CASE("tc rates in bits per second", "[cluster]") {
  CHECK(ddl::cluster::link_rate_bits("8000") == 8000);
  CHECK(ddl::cluster::link_rate_bits("64kbit") == 64 * 1000LL);
  CHECK(ddl::cluster::link_rate_bits("100mbit") == 100 * 1000 * 1000LL);
  CHECK(ddl::cluster::link_rate_bits("1GBit") == 1000LL * 1000 * 1000);  // tc's units ignore case
  CHECK(ddl::cluster::link_rate_bits("100mb") == 0);                     // tc's mb is bytes: refused
  CHECK(ddl::cluster::link_rate_bits("") == 0);
  CHECK(ddl::cluster::link_rate_bits("2000gbit") == 0);  // above 1 Tbit/s
  CHECK(ddl::cluster::rate_bits("10mbit") == 10 * 1000 * 1000LL);
  CHECK_THROWS_AS(ddl::cluster::rate_bits("4kbit"), UsageError);  // below 8 kbit
  CHECK_THROWS_AS(ddl::cluster::rate_bits("fast"), UsageError);
}

TEST_CASE("--link: every host's link, then one host's", "[cluster]") {
  Spec spec;
  spec.hosts = 3;
  ddl::cluster::apply_link_flag(spec, "100mbit,20ms,1%");
  ddl::cluster::apply_link_flag(spec, "host2=1gbit");
  CHECK(spec.link_for(0).rate == "100mbit");
  CHECK(spec.link_for(0).delay == "20ms");
  CHECK(spec.link_for(0).loss == "1%");
  CHECK(spec.link_for(2).rate == "1gbit");
  CHECK(spec.link_for(2).delay.empty());
  CHECK_THROWS_AS(ddl::cluster::apply_link_flag(spec, "host3=1gbit"), UsageError);  // host0..host2
  CHECK_THROWS_AS(ddl::cluster::apply_link_flag(spec, "hostx=1gbit"), UsageError);
  CHECK_THROWS_AS(ddl::cluster::apply_link_flag(spec, "100mbit,20"), UsageError);      // a delay needs a unit
  CHECK_THROWS_AS(ddl::cluster::apply_link_flag(spec, "100mbit,20ms,1"), UsageError);  // a loss needs %
}

TEST_CASE("--cpu, --memory and --link-flap name one host each", "[cluster]") {
  Spec spec;
  spec.hosts = 2;
  ddl::cluster::apply_cpu_flag(spec, "host1=0.5");
  CHECK(spec.cpu_of.at(1) == 0.5);
  CHECK(spec.cpu_of.count(0) == 0);
  CHECK_THROWS_AS(ddl::cluster::apply_cpu_flag(spec, "0.5"), UsageError);  // no host
  CHECK_THROWS_AS(ddl::cluster::apply_cpu_flag(spec, "host0=0"), UsageError);

  ddl::cluster::apply_memory_flag(spec, "host0=256M");
  CHECK(spec.memory_of.at(0) == 256LL << 20);
  ddl::cluster::apply_memory_flag(spec, "host1=1G");
  CHECK(spec.memory_of.at(1) == 1LL << 30);
  CHECK_THROWS_AS(ddl::cluster::apply_memory_flag(spec, "host0=1M"), UsageError);  // below 4 MiB
  CHECK_THROWS_AS(ddl::cluster::apply_memory_flag(spec, "host0=256X"), UsageError);

  ddl::cluster::apply_flap_flag(spec, "host1=5,2");
  CHECK(spec.flap_of.at(1).at == 5);
  CHECK(spec.flap_of.at(1).down_for == 2);
  ddl::cluster::apply_flap_flag(spec, "host0=3");
  CHECK(spec.flap_of.at(0).down_for == 1);  // D defaults to one second
  CHECK_THROWS_AS(ddl::cluster::apply_flap_flag(spec, "host0=3,0"), UsageError);
}
