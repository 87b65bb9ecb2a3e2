// Parsing of --link and --cpu (see spec.h).
#include <cctype>
#include <cstdlib>

#include <ddl/cluster/link_rate.h>
#include <ddl/cluster/spec.h>

namespace ddl::cluster {

const Link& Spec::link_for(int host) const {
  auto it = link_of.find(host);
  return it == link_of.end() ? link : it->second;
}

long long rate_bits(const std::string& rate) {
  const long long bits = cluster::link_rate_bits(rate);
  if (bits == 0)
    throw UsageError("link rate '" + rate +
                     "': use NUMBER followed by bit, kbit, mbit or gbit (e.g. 100mbit), at most 1000gbit");
  if (bits < 8000) throw UsageError("link rate '" + rate + "' is below 8kbit, too slow to run anything");
  return bits;
}

Link parse_link(const std::string& text) {
  Link l;
  const size_t c1 = text.find(',');
  l.rate = text.substr(0, c1);
  rate_bits(l.rate);
  if (c1 != std::string::npos) {
    const size_t c2 = text.find(',', c1 + 1);
    l.delay = text.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1);
    if (c2 != std::string::npos) l.loss = text.substr(c2 + 1);
    auto is_number_then = [](const std::string& s, const std::string& units) {
      size_t i = 0;
      while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
      return i > 0 && units.find("|" + s.substr(i) + "|") != std::string::npos;
    };
    if (!l.delay.empty() && !is_number_then(l.delay, "|ms|us|s|"))
      throw UsageError("link delay '" + l.delay + "': use a time such as 20ms (--link RATE,DELAY[,LOSS])");
    if (!l.loss.empty() && !is_number_then(l.loss, "|%|"))
      throw UsageError("link loss '" + l.loss + "': use a percentage such as 1% (--link RATE,DELAY,LOSS)");
  }
  return l;
}

namespace {
// "host2=VALUE" -> 2, checked against the number of hosts; -1 when there is no "hostI=".
int host_of(const Spec& spec, const std::string& value, std::string* rest) {
  const size_t eq = value.find('=');
  if (eq == std::string::npos) return -1;
  const std::string name = value.substr(0, eq);
  char* end = nullptr;
  const long i = name.rfind("host", 0) == 0 && name.size() > 4 ? std::strtol(name.c_str() + 4, &end, 10) : -1;
  if (i < 0 || *end != '\0' || i >= spec.hosts)
    throw UsageError("'" + value + "': hosts are named host0 to host" + std::to_string(spec.hosts - 1));
  *rest = value.substr(eq + 1);
  return static_cast<int>(i);
}
}  // namespace

void apply_link_flag(Spec& spec, const std::string& value) {
  std::string rest;
  const int host = host_of(spec, value, &rest);
  if (host < 0)
    spec.link = parse_link(value);
  else
    spec.link_of[host] = parse_link(rest);
}

void apply_cpu_flag(Spec& spec, const std::string& value) {
  std::string rest;
  const int host = host_of(spec, value, &rest);
  if (host < 0) throw UsageError("--cpu '" + value + "': use hostI=FRACTION, e.g. --cpu host1=0.5");
  char* end = nullptr;
  const double f = std::strtod(rest.c_str(), &end);
  if (rest.empty() || *end != '\0' || !(f >= 0.01 && f <= 1024))
    throw UsageError("--cpu '" + value + "': FRACTION is CPUs, between 0.01 and 1024 (0.5: half of one CPU)");
  spec.cpu_of[host] = f;
}

void apply_memory_flag(Spec& spec, const std::string& value) {
  std::string rest;
  const int host = host_of(spec, value, &rest);
  if (host < 0) throw UsageError("--memory '" + value + "': use hostI=BYTES, e.g. --memory host1=256M");
  char* end = nullptr;
  const double n = std::strtod(rest.c_str(), &end);
  const std::string unit = end ? std::string(end) : "";
  const double scale = unit.empty()                 ? 1
                       : unit == "K" || unit == "k" ? 1024
                       : unit == "M" || unit == "m" ? 1 << 20
                       : unit == "G" || unit == "g" ? 1 << 30
                                                    : 0;
  // Below a few MiB not even the program's start-up fits: the limit would only confuse.
  if (rest.empty() || scale == 0 || !(n * scale >= 4 << 20 && n * scale <= 1e15))
    throw UsageError("--memory '" + value + "': BYTES is a number of bytes (or with K, M, G), at least 4M");
  spec.memory_of[host] = static_cast<long long>(n * scale);
}

void apply_flap_flag(Spec& spec, const std::string& value) {
  std::string rest;
  const int host = host_of(spec, value, &rest);
  if (host < 0) throw UsageError("--link-flap '" + value + "': use hostI=T[,D], e.g. --link-flap host1=5,2");
  Spec::Flap f;
  char* end = nullptr;
  f.at = std::strtod(rest.c_str(), &end);
  if (end && *end == ',') f.down_for = std::strtod(end + 1, &end);
  if (rest.empty() || !end || *end != '\0' || !(f.at >= 0 && f.at <= 1e6) || !(f.down_for > 0 && f.down_for <= 1e6))
    throw UsageError("--link-flap '" + value + "': T and D are seconds (T >= 0, D > 0; D defaults to 1)");
  spec.flap_of[host] = f;
}

}  // namespace ddl::cluster
