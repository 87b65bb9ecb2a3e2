// Names and stats formatting for ProcessGroup (see process_group.h).
#include <cstdio>

#include <ddl/base/error.h>
#include <ddl/dist/env.h>
#include <ddl/dist/process_group.h>

namespace ddl::dist {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Avg:
      return "avg";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
  }
  return "?";
}

const char* op_kind_name(OpKind k) {
  static const char* names[kNumOpKinds] = {"all_reduce",     "broadcast", "reduce",  "all_gather",
                                           "reduce_scatter", "gather",    "scatter", "all_to_all",
                                           "barrier",        "send",      "recv",    "debug_check"};
  return names[static_cast<int>(k)];
}

int64_t CommStats::bytes_sent() const {
  int64_t n = 0;
  for (const auto& s : ops) n += s.bytes_sent;
  return n;
}

int64_t CommStats::bytes_received() const {
  int64_t n = 0;
  for (const auto& s : ops) n += s.bytes_received;
  return n;
}

std::string CommStats::summary() const {
  std::string out;
  char line[160];
  for (int k = 0; k < kNumOpKinds; ++k) {
    const OpStats& s = ops[k];
    if (s.calls == 0) continue;
    std::snprintf(line, sizeof line, "%s: %lld calls, sent %.3f MB, received %.3f MB\n",
                  op_kind_name(static_cast<OpKind>(k)), static_cast<long long>(s.calls), s.bytes_sent / 1e6,
                  s.bytes_received / 1e6);
    out += line;
  }
  return out;
}

ProcessGroup::ProcessGroup(int rank, int size) : rank_(rank), size_(size) {
  DDL_CHECK(size >= 1 && rank >= 0 && rank < size, "ProcessGroup: rank ", rank, " is outside a world of size ", size);
  DDL_CHECK(size <= kMaxWorldSize, "ProcessGroup: world size ", size, " is more than ddl's limit of ", kMaxWorldSize,
            " ranks");  // See Note [World size limit]
}

std::string ProcessGroup::p2p_description(OpKind kind, const Tensor& t, int peer, int tag) const {
  const bool is_send = kind == OpKind::Send;
  const char* name = is_send ? "send" : "recv";
  DDL_CHECK(peer >= 0 && peer < size() && peer != rank(), name, ": peer rank ", peer, " must be another rank in [0, ",
            size(), "), this is rank ", rank());
  DDL_CHECK(tag >= 0, name, ": tag must be >= 0, got ", tag);
  return std::string(name) + "(" + describe(t) + (is_send ? ", to rank " : ", from rank ") + std::to_string(peer) +
         ", tag=" + std::to_string(tag) + ")";
}

std::string ProcessGroup::log_prefix() const {
  return "[rank " + std::to_string(rank_) + "/" + std::to_string(size_) + "]";
}

}  // namespace ddl::dist
