// ddlrun --hosts without root: a user namespace (user_namespaces(7)) in which this process
// is root, with private mount and network namespaces, so the hosts it then builds are
// invisible to the machine and vanish with ddlrun. No --cpu there (cgroups are the machine's).
#pragma once

#include <string>

namespace ddl::cluster {

// Moves the calling, still single-threaded process into a new user namespace mapping its
// user to root, with a new mount namespace (a private tmpfs on /run, for /run/netns) and
// a new network namespace (ip netns add returns to it). Returns "" on success, else why
// it could not (e.g. unprivileged user namespaces are disabled).
std::string enter_rootless();

}  // namespace ddl::cluster
