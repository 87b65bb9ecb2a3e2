// Thin POSIX TCP helpers for the store and the launcher: listen, connect with
// retries, and exact-size reads and writes with deadlines. Internal (ddl::detail);
// errors throw ddl::Error naming the address. No TLS.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace ddl::dist::detail {

using Clock = std::chrono::steady_clock;

// Binds to host:port (port 0 = any free port) and listens. Returns the fd; *bound_port gets the port.
int tcp_listen(const std::string& host, int port, int* bound_port);
// Connects to host:port, retrying refused connections until `deadline`; each try is a
// non-blocking connect bounded by the time left, so the call returns (or throws) by `deadline`.
int tcp_connect(const std::string& host, int port, Clock::time_point deadline);
// Writes all n bytes (no SIGPIPE). Throws on error.
void send_all(int fd, const void* data, size_t n);
// Reads exactly n bytes before `deadline`. Returns false on timeout; throws when the peer closes
// the connection or on a socket error.
bool recv_all(int fd, void* data, size_t n, Clock::time_point deadline);
// "ip:port" of this end / the other end of a connected socket.
std::string local_address(int fd);
std::string peer_address(int fd);
// Just the IP part of local_address: the address of the interface that reaches the peer.
std::string local_ip(int fd);
// Throws ddl::Error naming `host` and getaddrinfo's error when it does not resolve.
void check_resolves(const std::string& host, int port);
// Whether every address `host` resolves to is a loopback one (127.0.0.0/8, ::1): a server
// bound there is reachable from this machine only. "" and "0.0.0.0" are not loopback.
bool is_loopback(const std::string& host);
// A free TCP port on host right now (bind port 0, read it, close). Racy by nature: prefer
// letting a server bind port 0 itself.
int find_free_port(const std::string& host = "127.0.0.1");

}  // namespace ddl::dist::detail
