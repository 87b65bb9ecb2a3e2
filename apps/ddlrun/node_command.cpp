// random_token and other_node_command (see node_command.h).
#include "apps/ddlrun/node_command.h"

#include <algorithm>
#include <cstdio>
#include <random>

#include "apps/common/shell_quote.h"

namespace ddl::launcher {

using apps::shell_quote;

std::string random_token() {
  std::random_device rd;
  char buf[33];
  std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  return buf;
}

// The command line node 1 needs: this one, with its token, --node-rank 1 and node 0's address.
std::string other_node_command(const Config& cfg, const std::string& token) {
  std::vector<std::string> words{"DDL_JOB_TOKEN=" + token};
  const size_t n_opts = cfg.argv.size() - std::min(cfg.argv.size(), cfg.command.size());
  bool has_rank = false, has_addr = false;
  for (size_t i = 0; i < n_opts; ++i) {
    const std::string& a = cfg.argv[i];
    if (a == "--node-rank" && i + 1 < n_opts) {
      words.insert(words.end(), {a, "1"});
      has_rank = true;
      ++i;
      continue;
    }
    if (a.rfind("--node-rank=", 0) == 0) {
      words.push_back("--node-rank=1");
      has_rank = true;
      continue;
    }
    has_addr |= a == "--master-addr" || a.rfind("--master-addr=", 0) == 0;
    words.push_back(a);
  }
  if (words.size() == 1) words.push_back("ddlrun");
  if (!has_rank) words.insert(words.end(), {"--node-rank", "1"});
  if (!has_addr) words.insert(words.end(), {"--master-addr", "ADDRESS_OF_NODE_0"});
  words.insert(words.end(), cfg.command.begin(), cfg.command.end());
  std::string line;
  for (size_t i = 0; i < words.size(); ++i)
    line += (i ? " " : "") + (i == 0 || words[i] == "ADDRESS_OF_NODE_0" ? words[i] : shell_quote(words[i]));
  return line;
}

}  // namespace ddl::launcher
