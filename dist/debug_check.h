// DDL_DEBUG's pre-collective check, shared by the backends: the record each rank
// contributes ("#7 all_reduce(float32 x 1000, sum)"), the error listing every rank's call
// when they differ, and a record exchange through the group's Store (used by nccl, whose
// collectives run on the GPU; gloo exchanges its records with a small all-gather instead).
// It checks what ranks call, not what their tensors hold. See Note [DDL_DEBUG check].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ddl/dist/store/store.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl::dist::detail {

// True when DDL_DEBUG is set to anything but "" or "0".
bool debug_from_env();

// "float32 x 1000": what DDL_DEBUG compares of a tensor (sizes, not shapes: a [10,100]
// may meet a [1000]).
std::string debug_signature(const Tensor& t);

// "#<seq> <fingerprint>": what must be identical on every rank.
std::string debug_record(int64_t seq, const std::string& fingerprint);

// Empty when every record equals the first; otherwise the error text, one line per rank:
// "<log_prefix> DDL_DEBUG: ranks called different collectives:\n  rank 0: #7 ...".
std::string debug_mismatch_message(const std::string& log_prefix, const std::vector<std::string>& records);

// The error when a backend's own record exchange fails (`what`: its exception). A peer the
// caller identified (peer >= 0, at `address`) is named as gone; a timeout as ranks that did
// not arrive within `timeout`; anything else as a peer that failed. Never claims a wait that
// did not happen.
std::string debug_exchange_failure(const std::string& log_prefix, const std::string& desc, int peer,
                                   const std::string& address, bool timed_out, Millis timeout, const std::string& what);

// "<what_failed> failed...: <reason> (<cause>)" for a Gloo failure, shared by collectives,
// point-to-point calls and the DDL_DEBUG check: a peer known from the message (peer >= 0,
// at `address` when not "") broke its connection; a timeout says `timeout_reason` (what the
// caller knows of who went quiet); anything else is a peer that failed. `peers` ("" or
// "ranks 1, 2") is who the call talked to, said when the peer is not known.
std::string peer_failure_message(const std::string& what_failed, const std::string& peers, int peer,
                                 const std::string& address, bool timed_out, const std::string& timeout_reason,
                                 const std::string& cause);

// Every rank sets "ddl-debug/<seq>/<rank>" to its record, then waits up to `timeout` for the
// others' and returns all of them (out[r] is rank r's). Throws ddl::Error naming `desc` and
// the ranks that never arrived. With size 1 it touches no store. Every rank must call it with
// the same seq, in the same order (one call per collective).
std::vector<std::string> store_exchange_records(Store& store, int rank, int size, int64_t seq,
                                                const std::string& record, const std::string& desc, Millis timeout);

// store_exchange_records, then throws ddl::Error with debug_mismatch_message on every rank
// when the records differ. desc names the call in errors ("all_reduce(float32[4] on cuda:0, sum)").
void store_debug_check(Store& store, int rank, int size, int64_t seq, const std::string& fingerprint,
                       const std::string& desc, Millis timeout);

}  // namespace ddl::dist::detail
