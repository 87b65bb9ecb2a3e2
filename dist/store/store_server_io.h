// What both halves of TCPStoreServer (store_server.cpp, store_admission.cpp) write: reply
// frames and log lines. Internal to dist/store; not installed.
#pragma once

#include <unistd.h>

#include <string>

#include <ddl/dist/store/store_wire.h>

namespace ddl::dist::detail {

inline std::string server_reply(Status s, const std::string& payload = "") {
  return WireWriter().u8(static_cast<uint8_t>(s)).str(payload).frame();
}

// One write(2) per line, so a line from a server thread is never split by other output.
inline void server_log_line(const std::string& line) {
  const std::string text = line + "\n";
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace ddl::dist::detail
