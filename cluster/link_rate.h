// A link rate as tc(8) writes it ("100mbit", "1gbit", "64kbit", "8000" bits/s) in bits per
// second, parsed once for ddlrun --link and sync_study --links so both accept the same
// rates. Returns 0 for anything else, or above 1 Tbit/s (no overflow on long numbers).
#pragma once

#include <cctype>
#include <string>

namespace ddl::cluster {

inline long long link_rate_bits(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 13) return 0;
  std::string unit = text.substr(digits);
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const double mult = unit == "" || unit == "bit" ? 1
                      : unit == "kbit"            ? 1e3
                      : unit == "mbit"            ? 1e6
                      : unit == "gbit"            ? 1e9
                                                  : 0;
  const double bits = std::stod(text.substr(0, digits)) * mult;
  return bits > 1e12 ? 0 : static_cast<long long>(bits);
}

}  // namespace ddl::cluster
