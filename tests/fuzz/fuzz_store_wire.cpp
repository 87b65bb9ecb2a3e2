// libFuzzer target: the TCP store's wire protocol, server side. Each input is the byte
// stream one client sends to a real TCPStoreServer on 127.0.0.1 (so framing, the HELLO
// check and every request decoder in store_server.cpp and store_wire.cpp run as deployed).
// First byte, bit 0: prepend a valid HELLO with the right token, so the rest reaches the
// request decoders; clear, the whole stream is fuzzed from its first byte. The server is
// shared between inputs and restarted when a request blocks it (a long get/wait) or every
// 20,000 inputs, which bounds the memory its keys hold.
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <ddl/dist/store/store_wire.h>
#include <ddl/dist/store/tcp_store.h>

namespace {

constexpr const char* kToken = "fuzz-token";
constexpr int kSliceMs = 50;

std::unique_ptr<ddl::dist::TCPStoreServer> server;
int64_t served = 0;

// Open descriptors and threads of this process, for the report when a connect fails.
int64_t count_entries(const char* dir) {
  int64_t n = 0;
  if (DIR* d = opendir(dir)) {
    while (readdir(d)) ++n;
    closedir(d);
  }
  return n - 2;  // . and ..
}

// A harness failure, not a finding in the server: says why, so a rare one can be explained.
[[noreturn]] void harness_failure(const char* call, int err) {
  std::fprintf(stderr, "fuzz_store_wire harness: %s failed: %s; %lld open descriptors, %lld threads\n", call,
               std::strerror(err), static_cast<long long>(count_entries("/proc/self/fd")),
               static_cast<long long>(count_entries("/proc/self/task")));
  std::abort();
}

int connect_to(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) harness_failure("socket", errno);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // libFuzzer's timeout alarm (SIGALRM, installed without SA_RESTART) can interrupt a
  // connect that waits for a full accept queue; the connection then completes by itself.
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    if (errno != EINTR) harness_failure("connect", errno);
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    while (poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) harness_failure("connect (after EINTR)", err);
  }
  // Reset on close: no TIME_WAIT, so millions of short connections cannot use up the ports.
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

// Sends what the server takes and reads its replies until it closes; false when it stalls.
bool exchange(int fd, const std::string& out) {
  size_t sent = 0;
  bool write_open = true;
  char buf[4096];
  for (;;) {
    if (write_open && sent == out.size()) {
      shutdown(fd, SHUT_WR);
      write_open = false;
    }
    pollfd p{fd, static_cast<short>(POLLIN | (write_open ? POLLOUT : 0)), 0};
    if (poll(&p, 1, kSliceMs) <= 0) return false;
    if (p.revents & POLLOUT) {
      const ssize_t k = send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
      if (k > 0) sent += static_cast<size_t>(k);
      if (k < 0 && errno != EAGAIN) write_open = false;
    }
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t k = recv(fd, buf, sizeof buf, 0);
      if (k == 0 || (k < 0 && errno != EAGAIN)) return true;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if (!server || ++served % 20000 == 0) {
    server.reset();
    server = std::make_unique<ddl::dist::TCPStoreServer>("127.0.0.1", 0, kToken);
  }
  std::string out;
  if (data[0] & 1) {
    using namespace ddl::dist::detail;
    out = WireWriter().u8(uint8_t(Op::Hello)).u32(kWireMagic).u32(kWireVersion).str(kToken).frame();
  }
  out.append(reinterpret_cast<const char*>(data + 1), size - 1);
  const int fd = connect_to(server->port());
  const bool finished = exchange(fd, out);
  close(fd);
  if (!finished) server.reset();  // a request still blocks a server thread: start afresh
  return 0;
}
