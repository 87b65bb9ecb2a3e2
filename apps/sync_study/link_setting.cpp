// Parsing sync_study's --links list (see link_setting.h).
#include "apps/sync_study/link_setting.h"

#include <cctype>
#include <sstream>

#include <ddl/base/error.h>
#include <ddl/cluster/link_rate.h>

namespace ddl::apps {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) parts.push_back(part);
  if (!s.empty() && s.back() == sep) parts.emplace_back();
  return parts;
}

bool plain(const std::string& s) {  // safe in a file name and on a shell command line
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '%') return false;
  return !s.empty();
}

}  // namespace

std::vector<LinkSetting> parse_links(const std::string& list) {
  std::vector<LinkSetting> out;
  for (const std::string& spec : split(list, ',')) {
    const auto parts = split(spec, '/');
    DDL_CHECK(!spec.empty() && parts.size() <= 3, "sync_study --links: '", spec,
              "' is not RATE[/DELAY[/LOSS]] (settings are separated by commas, e.g. 10mbit,100mbit/20ms,1gbit)");
    LinkSetting s;
    s.spec = spec;
    s.rate_bits = static_cast<double>(ddl::cluster::link_rate_bits(parts[0]));  // the rates ddlrun --link accepts
    DDL_CHECK(s.rate_bits >= 8000, "sync_study --links: rate '", parts[0],
              "' is not NUMBER followed by bit, kbit, mbit or gbit between 8kbit and 1000gbit (e.g. 100mbit)");
    for (const auto& p : parts)
      DDL_CHECK(plain(p), "sync_study --links: '", p, "' in '", spec,
                "' has characters other than letters, digits, . and %");
    for (size_t i = 0; i < parts.size(); ++i) {
      s.ddlrun_arg += (i ? "," : "") + parts[i];
      std::string part = parts[i];
      if (part.back() == '%') part = part.substr(0, part.size() - 1) + "pct";
      s.label += (i ? "-" : "") + part;
    }
    for (const auto& other : out) DDL_CHECK(other.label != s.label, "sync_study --links: '", spec, "' is given twice");
    out.push_back(s);
  }
  DDL_CHECK(!out.empty(), "sync_study --links: give at least one link setting, e.g. 10mbit,100mbit,1gbit");
  return out;
}

}  // namespace ddl::apps
