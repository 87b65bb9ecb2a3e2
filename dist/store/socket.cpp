// POSIX TCP helpers (see socket.h).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <ddl/base/error.h>
#include <ddl/dist/store/socket.h>

namespace ddl::dist::detail {
namespace {

using Millis = std::chrono::milliseconds;

struct AddrInfo {
  addrinfo* head = nullptr;
  AddrInfo(const std::string& host, int port, bool passive) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    const std::string service = std::to_string(port);
    int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &head);
    DDL_CHECK(rc == 0, "dist: cannot resolve address '", host, "': ", gai_strerror(rc),
              " (getaddrinfo; check MASTER_ADDR, --master-addr or the tcp:// host, or give an IP address)");
  }
  ~AddrInfo() {
    if (head) freeaddrinfo(head);
  }
};

std::string format_sockaddr(const sockaddr_storage& ss) {
  char ip[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
    port = ntohs(a->sin_port);
    return std::string(ip) + ":" + std::to_string(port);
  }
  if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
    port = ntohs(a->sin6_port);
    return "[" + std::string(ip) + "]:" + std::to_string(port);
  }
  return "?";
}

}  // namespace

int tcp_listen(const std::string& host, int port, int* bound_port) {
  AddrInfo ai(host, port, true);
  std::string last_error = "no address";
  for (addrinfo* p = ai.head; p; p = p->ai_next) {
    int fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, p->ai_addr, p->ai_addrlen) == 0 && listen(fd, 512) == 0) {
      sockaddr_storage ss{};
      socklen_t len = sizeof ss;
      getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
      if (bound_port)
        *bound_port = ntohs(ss.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                                    : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
      return fd;
    }
    last_error = std::strerror(errno);
    close(fd);
  }
  DDL_CHECK(false, "dist: cannot listen on ", host, ":", port, ": ", last_error,
            " (is the port in use? pick another MASTER_PORT)");
  return -1;
}

namespace {

// One non-blocking connect, waiting at most `wait`: a host that drops SYNs costs the time
// left, never the kernel's own SYN timeout (~2 min per try). Returns the fd, or -1 with *error.
int connect_once(const addrinfo* p, Millis wait, std::string* error) {
  int fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, p->ai_protocol);
  if (fd < 0) {
    *error = std::strerror(errno);
    return -1;
  }
  int rc = connect(fd, p->ai_addr, p->ai_addrlen);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd pfd{fd, POLLOUT, 0};
    do rc = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(wait.count(), 1 << 30)));
    while (rc < 0 && errno == EINTR);
    int err = 0;
    socklen_t len = sizeof err;
    if (rc == 0)
      err = ETIMEDOUT;
    else if (rc < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
      err = errno;
    errno = err;
    rc = err == 0 ? 0 : -1;
  }
  if (rc != 0) {
    *error = errno == ETIMEDOUT ? "no answer (the address may drop connections: a firewall, or no such host)"
                                : std::strerror(errno);
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

int tcp_connect(const std::string& host, int port, Clock::time_point deadline) {
  std::string last_error;
  auto backoff = std::chrono::milliseconds(10);
  bool first = true;
  while (true) {
    AddrInfo ai(host, port, false);
    for (addrinfo* p = ai.head; p; p = p->ai_next) {
      // The first try gets a moment even when the deadline has passed (a deadline of now = one try).
      auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
      int fd = connect_once(p, std::max(left, first ? Millis(100) : Millis(0)), &last_error);
      if (fd >= 0) return fd;
    }
    first = false;
    DDL_CHECK(Clock::now() < deadline, "dist: cannot connect to ", host, ":", port, ": ", last_error,
              " (is rank 0 / the launcher running, and MASTER_ADDR/MASTER_PORT right?)");
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff, deadline - Clock::now()));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(200));
  }
}

void send_all(int fd, const void* data, size_t n) {
  auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    DDL_CHECK(k > 0, "dist: send to ", peer_address(fd), " failed: ", std::strerror(errno));
    p += k;
    n -= static_cast<size_t>(k);
  }
}

bool recv_all(int fd, void* data, size_t n, Clock::time_point deadline) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    int rc = poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
    if (rc < 0 && errno == EINTR) continue;
    DDL_CHECK(rc >= 0, "dist: poll failed: ", std::strerror(errno));
    if (rc == 0) continue;
    ssize_t k = ::recv(fd, p, n, 0);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    DDL_CHECK(k != 0, "dist: connection closed by ", peer_address(fd));
    DDL_CHECK(k > 0, "dist: recv from ", peer_address(fd), " failed: ", std::strerror(errno));
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

std::string local_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return format_sockaddr(ss);
}

std::string peer_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return format_sockaddr(ss);
}

std::string local_ip(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  char ip[INET6_ADDRSTRLEN] = "127.0.0.1";
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    if (ss.ss_family == AF_INET)
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, ip, sizeof ip);
    else if (ss.ss_family == AF_INET6)
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr, ip, sizeof ip);
  }
  return ip;
}

void check_resolves(const std::string& host, int port) {
  if (!host.empty()) AddrInfo(host, port, true);
}

bool is_loopback(const std::string& host) {
  if (host.empty()) return false;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* head = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &head) != 0) return false;
  bool all = head != nullptr;
  for (addrinfo* p = head; p; p = p->ai_next) {
    if (p->ai_family == AF_INET) {
      all &= (ntohl(reinterpret_cast<sockaddr_in*>(p->ai_addr)->sin_addr.s_addr) >> 24) == 127;
    } else if (p->ai_family == AF_INET6) {
      const in6_addr& a = reinterpret_cast<sockaddr_in6*>(p->ai_addr)->sin6_addr;
      all &= IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
    } else {
      all = false;
    }
  }
  freeaddrinfo(head);
  return all;
}

int find_free_port(const std::string& host) {
  int port = 0;
  int fd = tcp_listen(host, 0, &port);
  close(fd);
  return port;
}

}  // namespace ddl::dist::detail
