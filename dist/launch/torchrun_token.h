// The job token of ranks started by torchrun with an elastic rendezvous (c10d), where rank 0
// serves ddl's store itself and nobody gave DDL_JOB_TOKEN: taken through torchrun's own
// rendezvous store, so ddl's store trusts exactly whom torchrun trusts (Note [Tokens under
// torchrun] in torchrun_token.cpp). Not for torchrun's default rendezvous, where ddl is a
// client of the agent's PyTorch store and has no store of its own to protect.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <ddl/dist/env.h>
#include <ddl/dist/store/store.h>

namespace ddl::dist {

// The token for `env` (its source names how it was made), or nullopt when this process was
// not started by torchrun (no TORCHELASTIC_RUN_ID). Throws naming the rendezvous store when
// it cannot be reached by `deadline`.
std::optional<JobToken> torchrun_job_token(const LaunchEnv& env, Millis timeout,
                                           std::chrono::steady_clock::time_point deadline);

namespace detail {
// torchrun's rendezvous endpoint "host:port" in its command line (the arguments, NUL-free),
// when the backend is c10d: --rdzv_endpoint / --rdzv-endpoint, with or without "=", the port
// 29400 when left out (torchrun's default). "" otherwise (static rendezvous, etcd).
std::string c10d_endpoint(const std::vector<std::string>& torchrun_args);
}  // namespace detail

}  // namespace ddl::dist
