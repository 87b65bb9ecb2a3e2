// libFuzzer target: what rank 0 of a traced job receives from another rank when it merges
// the trace (dist/trace_merge.cpp): three int64 sizes (events bytes, info bytes, dropped
// events) as the all_gather delivers them, then the bytes the rank sends. Whatever the
// input, the checks either refuse it with a ddl::Error or accept it, and then the merged
// document written from it must be valid JSON: a peer can make the merge fail, never
// make it write an invalid file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include <ddl/base/error.h>
#include <ddl/dist/trace_merge.h>
#include <ddl/trace/json_writer.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 24) return 0;
  int64_t n[3];
  std::memcpy(n, data, 24);
  const std::string_view rest(reinterpret_cast<const char*>(data) + 24, size - 24);
  try {
    ddl::dist::detail::check_trace_sizes(1, n[0], n[1], n[2], 1 << 10);  // a small cap: 1 MiB
    // A real rank sends exactly the announced bytes; shorter input cannot be delivered.
    if (static_cast<uint64_t>(n[0]) + static_cast<uint64_t>(n[1]) > rest.size()) return 0;
    const std::string_view events = rest.substr(0, n[0]), info = rest.substr(n[0], n[1]);
    ddl::dist::detail::check_trace_part(1, events, info);
    std::ostringstream os;
    ddl::trace::DocumentWriter doc(os);
    doc.add_events("{\"name\":\"rank 0's own\"}");  // as rank 0's part comes first
    doc.add_events(events);
    doc.add_events("{\"name\":\"rank 2's\"}");
    doc.finish({std::string(info)}, "fuzz");
    if (!nlohmann::json::accept(os.str())) {
      std::fprintf(stderr, "accepted parts made an invalid trace:\n%s\n", os.str().c_str());
      std::abort();
    }
  } catch (const ddl::Error&) {
  }
  return 0;
}
