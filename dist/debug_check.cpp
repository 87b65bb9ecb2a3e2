// DDL_DEBUG's records, mismatch message and store-based exchange (see debug_check.h).
// Backends decide when to check; this file only compares and reports.
//
// Note [DDL_DEBUG through the store]
// nccl cannot check with a collective of its own: the answer must reach the host before the
// real collective is enqueued (a mismatch throws, launching nothing), and an NCCL exchange
// with a rank that never comes hangs on the GPU until the watchdog aborts the communicators.
// So the records go through the group's Store, on the caller's thread: each rank sets
// "ddl-debug/<seq>/<rank>", waits for the other ranks' keys and reads them (N+1 store round
// trips per collective). The store cannot delete, so the keys stay: roughly 200 bytes per
// rank per collective in the store server's memory, key, value and map node (1e5 collectives
// on 8 ranks: ~160 MB). That is the price of debug mode only; DDL_DEBUG=0 touches no store.
// Each check synchronises the ranks, so a rank that never arrives (died, hangs, or stopped
// calling collectives) is named at the timeout; one that skipped a call shows as a mismatch.
#include <cstdlib>
#include <exception>

#include <ddl/base/error.h>
#include <ddl/dist/agreement.h>
#include <ddl/dist/debug_check.h>

namespace ddl::dist::detail {

namespace {
std::string rank_prefix(int rank, int size) {  // ProcessGroup::log_prefix's format
  return "[rank " + std::to_string(rank) + "/" + std::to_string(size) + "]";
}
}  // namespace

bool debug_from_env() {
  const char* v = std::getenv("DDL_DEBUG");
  return v && *v && std::string(v) != "0";
}

std::string debug_signature(const Tensor& t) {
  return std::string(dtype_name(t.dtype())) + " x " + std::to_string(t.numel());
}

std::string debug_record(int64_t seq, const std::string& fingerprint) {
  return "#" + std::to_string(seq) + " " + fingerprint;
}

std::string debug_mismatch_message(const std::string& log_prefix, const std::vector<std::string>& records) {
  bool same = true;
  for (const auto& r : records) same = same && r == records[0];
  if (same) return {};
  return rank_lines_message(log_prefix + " DDL_DEBUG: ranks called different collectives", records,
                            "Every rank must call the same collectives, in the same order, with the same sizes and "
                            "dtypes.");
}

std::string debug_exchange_failure(const std::string& log_prefix, const std::string& desc, int peer,
                                   const std::string& address, bool timed_out, Millis timeout,
                                   const std::string& what) {
  return peer_failure_message(log_prefix + " DDL_DEBUG: the check before " + desc, "", peer, address, timed_out,
                              "not every rank reached it within " + std::to_string(timeout.count()) +
                                  " ms (a rank hangs, or called fewer collectives; every rank must call the same "
                                  "collectives in the same order)",
                              "gloo: " + what);
}

std::string peer_failure_message(const std::string& what_failed, const std::string& peers, int peer,
                                 const std::string& address, bool timed_out, const std::string& timeout_reason,
                                 const std::string& cause) {
  std::string msg = what_failed;
  if (peer >= 0)
    msg += " failed: the connection to rank " + std::to_string(peer) + (address.empty() ? "" : " (" + address + ")") +
           " broke: that rank exited, or closed its connections after a failure of its own";
  else
    msg += (peers.empty() ? std::string(" failed: ") : " failed while talking to " + peers + ": ") +
           (timed_out ? timeout_reason : "a peer failed or closed its connection");
  return msg + " (" + cause + ")";
}

std::vector<std::string> store_exchange_records(Store& store, int rank, int size, int64_t seq,
                                                const std::string& record, const std::string& desc, Millis timeout) {
  DDL_ASSERT(size >= 1 && rank >= 0 && rank < size, "store_exchange_records: rank ", rank, " of ", size);
  std::vector<std::string> out(size);
  out[rank] = record;
  if (size == 1) return out;
  // See Note [DDL_DEBUG through the store].
  const std::string prefix = "ddl-debug/" + std::to_string(seq) + "/";
  std::vector<std::string> others;
  for (int r = 0; r < size; ++r)
    if (r != rank) others.push_back(prefix + std::to_string(r));
  try {
    store.set(prefix + std::to_string(rank), record);
    store.wait(others, timeout);
    for (int r = 0; r < size; ++r)
      if (r != rank) out[r] = store.get(prefix + std::to_string(r), timeout);  // present: returns at once
  } catch (const std::exception& e) {
    std::string missing;
    try {
      for (int r = 0; r < size; ++r)
        if (r != rank && !store.check({prefix + std::to_string(r)}))
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    } catch (const std::exception&) {
      missing.clear();  // the store itself failed: report its error below
    }
    std::string msg = rank_prefix(rank, size) + " DDL_DEBUG: the check before " + desc + " (collective #" +
                      std::to_string(seq) + ") failed: ";
    if (!missing.empty())
      msg += "rank(s) " + missing + " did not reach it within " + std::to_string(timeout.count()) +
             " ms (they died, hang, or called fewer collectives; every rank must call the same collectives in "
             "the same order)";
    else
      msg += std::string("the store exchange failed: ") + e.what();
    throw Error(msg);
  }
  return out;
}

void store_debug_check(Store& store, int rank, int size, int64_t seq, const std::string& fingerprint,
                       const std::string& desc, Millis timeout) {
  const auto records = store_exchange_records(store, rank, size, seq, debug_record(seq, fingerprint), desc, timeout);
  const std::string msg = debug_mismatch_message(rank_prefix(rank, size), records);
  if (!msg.empty()) throw Error(msg);
}

}  // namespace ddl::dist::detail
