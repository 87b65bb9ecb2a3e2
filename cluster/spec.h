// What `ddlrun --hosts` is asked to emulate: how many hosts, each one's link (rate, and
// the delay and loss only netem can add), CPU share, memory limit and link flaps. Parsing only; building the hosts
// is cluster.h's job.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

namespace ddl::cluster {

// A mistake on the command line: ddlrun exits with status 2 on it.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One host's link: "100mbit", "100mbit,20ms", "100mbit,20ms,1%".
struct Link {
  std::string rate;   // tc rate, e.g. "100mbit"
  std::string delay;  // "" or a tc time, e.g. "20ms"
  std::string loss;   // "" or a percentage, e.g. "1%"
};

struct Spec {
  int hosts = 0;  // 0: no emulation
  int nproc_per_host = 1;
  Link link;                           // every host's, unless overridden
  std::map<int, Link> link_of;         // --link hostI=RATE
  std::map<int, double> cpu_of;        // --cpu hostI=FRACTION (of one CPU)
  std::map<int, long long> memory_of;  // --memory hostI=BYTES
  struct Flap {
    double at = 0, down_for = 1;  // seconds after the hosts are up; seconds down
  };
  std::map<int, Flap> flap_of;  // --link-flap hostI=T[,D]

  const Link& link_for(int host) const;
};

// "100mbit" -> 100000000; throws UsageError on anything but NUMBER[bit|kbit|mbit|gbit].
long long rate_bits(const std::string& rate);
Link parse_link(const std::string& text);
// Applies one --link or --cpu value: "RATE[,DELAY[,LOSS]]" (the default link, --link only)
// or "hostI=VALUE" (one host). Call after spec.hosts is set.
void apply_link_flag(Spec& spec, const std::string& value);
void apply_cpu_flag(Spec& spec, const std::string& value);
// "hostI=BYTES" (a number, or with K, M, G: KiB, MiB, GiB) and "hostI=T[,D]" (seconds).
void apply_memory_flag(Spec& spec, const std::string& value);
void apply_flap_flag(Spec& spec, const std::string& value);

}  // namespace ddl::cluster
