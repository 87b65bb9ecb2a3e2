// all_gather_records, rank_lines_message and broadcast_bytes (see agreement.h).
#include <algorithm>
#include <cstring>

#include <ddl/dist/agreement.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::dist {

std::vector<std::string> all_gather_records(ProcessGroup& group, const std::string& record) {
  const int64_t width = kRecordBytes;
  const Tensor mine = zeros({width}, DType::UInt8);
  std::memcpy(mine.data<uint8_t>(), record.data(), std::min(record.size(), kRecordBytes - 1));
  const Tensor all = zeros({width * group.size()}, DType::UInt8);
  group.all_gather(all, mine);
  std::vector<std::string> out;
  for (int r = 0; r < group.size(); ++r) {
    const char* p = reinterpret_cast<const char*>(all.data<uint8_t>()) + r * width;
    out.emplace_back(p, strnlen(p, kRecordBytes));
  }
  return out;
}

std::string rank_lines_message(const std::string& headline, const std::vector<std::string>& lines,
                               const std::string& advice) {
  std::string msg = headline + ":";
  for (size_t r = 0; r < lines.size(); ++r) msg += "\n  rank " + std::to_string(r) + ": " + lines[r];
  if (!advice.empty()) msg += "\n" + advice;
  return msg;
}

std::string broadcast_bytes(ProcessGroup& group, const std::string& bytes, int root) {
  const bool is_root = group.rank() == root;
  const Tensor length = zeros({1}, DType::Int64);
  if (is_root) length.data<int64_t>()[0] = static_cast<int64_t>(bytes.size());
  group.broadcast(length, root);
  const int64_t n = length.data<int64_t>()[0];
  if (n == 0) return {};
  const Tensor buf = zeros({n}, DType::UInt8);
  if (is_root) std::memcpy(buf.data<uint8_t>(), bytes.data(), bytes.size());
  group.broadcast(buf, root);
  return std::string(reinterpret_cast<const char*>(buf.data<uint8_t>()), n);
}

}  // namespace ddl::dist
