// The job token node 0's ddlrun makes when none is given, and the command line it prints
// for node 1 (its own, with the token, --node-rank 1 and node 0's address). Nothing here
// talks to the store: Note [Job tokens] in dist/env.cpp says what the token guards.
#pragma once

#include <string>

#include "apps/ddlrun/launcher.h"

namespace ddl::launcher {

// 128 random bits as 32 hex digits.
std::string random_token();

// The command line node 1 needs: this one, with its token, --node-rank 1 and node 0's
// address (ADDRESS_OF_NODE_0 when this node had no --master-addr).
std::string other_node_command(const Config& cfg, const std::string& token);

}  // namespace ddl::launcher
