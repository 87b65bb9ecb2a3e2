// One link setting of the bandwidth sweep (sync_study --links): a rate, optionally a
// delay and a loss, written RATE[/DELAY[/LOSS]] so that a list of them can be separated
// by commas (100mbit,1gbit/20ms). It only parses and names; ddlrun --hosts shapes the link.
#pragma once

#include <string>
#include <vector>

namespace ddl::apps {

struct LinkSetting {
  std::string spec;        // as given: "100mbit/20ms"
  std::string ddlrun_arg;  // ddlrun --link's syntax: "100mbit,20ms"
  std::string label;       // for file names: "100mbit-20ms"
  double rate_bits = 0;    // bits per second, each way
};

// Parses "10mbit,100mbit/5ms,1gbit". A RATE is NUMBER followed by bit, kbit, mbit or gbit;
// DELAY and LOSS go to ddlrun (tc netem syntax: 20ms, 1%). Throws ddl::Error on a bad spec.
std::vector<LinkSetting> parse_links(const std::string& list);

}  // namespace ddl::apps
