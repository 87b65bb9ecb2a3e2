// Authentication of a Slurm (or Open MPI) job's ranks through MUNGE, which every Slurm
// cluster that uses auth/munge runs on each node (munged, one shared key): a rank presents
// a fresh credential made by `munge`, restricted to its own user and carrying the job id;
// the store serving rank decodes it with `unmunge` and admits the rank only when it
// decodes, was never seen before (munged's replay cache), comes from the same user and
// names the same job (step). No shared file and no secret crossing the network. See Note
// [MUNGE tokens].
#pragma once

#include <string>

namespace ddl::dist::detail {

// A job token of this form asks for MUNGE credentials instead of a shared string.
inline constexpr char kMungeTokenPrefix[] = "munge-job:";
// A HELLO's token of this form carries one credential.
inline constexpr char kMungeCredentialPrefix[] = "munge:";

// True when `munge` can make a credential here now (munged running; DDL_MUNGE_SOCKET, when
// set, is its socket). Cached after the first call.
bool munge_available();
// A credential for `payload`, decodable only by this user; throws naming munge's error.
std::string munge_credential(const std::string& payload);
// "" when `credential` decodes (not replayed), was made by this user and carries `payload`;
// otherwise why not, in words.
std::string munge_check(const std::string& credential, const std::string& payload);

}  // namespace ddl::dist::detail
