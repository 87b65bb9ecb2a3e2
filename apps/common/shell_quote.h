// A word quoted for sh(1), so a command line built as text runs exactly these words: plain
// words stay as they are, anything else goes in single quotes ('\'' for a quote inside).
// Shared by ddlrun (the command line it prints for other nodes) and sync_study (the runs
// it starts through system(3)).
#pragma once

#include <string>

namespace ddl::apps {

inline std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./:,@%") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace ddl::apps
