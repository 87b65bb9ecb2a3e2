// Small pieces the dist tests share: a TCPStore client and GlooOptions with a given
// timeout, run_ranks, a substring check for rank bodies, the store server of a process run (in the
// test process only), and a fresh HOME for tests that make ~/.ddl/secret (so the real
// home directory is never touched).
#pragma once

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "tests/common/harness.h"
#include <ddl/dist/dist.h>

namespace ddl::test {

inline bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline std::shared_ptr<dist::TCPStore> store_client(int port, dist::Millis timeout) {
  dist::TCPStoreOptions so;
  so.timeout = timeout;
  return std::make_shared<dist::TCPStore>("127.0.0.1", port, so);
}

// shm = 1: all_reduce through shared memory (ranks of one host); 0: Gloo's TCP ring.
// DDL_DEBUG checks off, so tests see the transport's own behaviour.
inline dist::GlooOptions gloo_options(dist::Millis timeout, int shm) {
  dist::GlooOptions o;
  o.timeout = timeout;
  o.debug = 0;
  o.shm = shm;
  return o;
}

// A Gloo group over the TCPStore at 127.0.0.1:port: 20 s store and collective timeouts,
// every other option at its default (DDL_DEBUG, shared memory as the environment says).
inline std::shared_ptr<dist::ProcessGroup> gloo_group(int port, int rank, int world) {
  dist::GlooOptions go;
  go.timeout = dist::Millis(20000);
  return std::make_shared<dist::ProcessGroupGloo>(store_client(port, dist::Millis(20000)), rank, world, go);
}

// A TCPStoreServer on 127.0.0.1 served by the test process, as ddlrun serves one; the
// rank processes of run_processes get its port, never a server of their own (see Note
// [Ranks re-execute the test] in harness.h). `name` tells two such servers apart.
class ParentStoreServer {
 public:
  explicit ParentStoreServer(const std::string& name = "store")
      : port_(std::stoi(from_parent(name + "_port", [&] {
          server_ = std::make_unique<dist::TCPStoreServer>("127.0.0.1", 0);
          return std::to_string(server_->port());
        }))) {}
  int port() const { return port_; }

 private:
  std::unique_ptr<dist::TCPStoreServer> server_;  // null in a rank process
  int port_;
};

// fn(rank, group) in `world` rank processes over one ParentStoreServer; requires every
// rank to succeed.
template <typename Fn>
void run_ranks(int world, Fn&& fn) {
  ParentStoreServer server;
  const int port = server.port();
  auto outs = run_processes(world, [&](int rank) { fn(rank, gloo_group(port, rank, world)); });
  INFO(describe(outs));
  REQUIRE(all_ok(outs));
}

// A fresh directory made by the test process (mkdtemp on `pattern`, ending in XXXXXX),
// the same path in its rank processes; removed by the caller.
inline std::string parent_temp_dir(const std::string& name, const std::string& pattern) {
  return from_parent(name, [&] {
    std::string t = pattern;
    if (!mkdtemp(t.data())) throw std::runtime_error("mkdtemp " + pattern + " failed");
    return t;
  });
}

struct TempHome {
  std::string dir, old;
  TempHome() {
    char tmpl[] = "/tmp/ddl_home_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    if (const char* h = std::getenv("HOME")) old = h;
    setenv("HOME", dir.c_str(), 1);
  }
  ~TempHome() {
    if (old.empty())
      unsetenv("HOME");
    else
      setenv("HOME", old.c_str(), 1);
    std::filesystem::remove_all(dir);
  }
  TempHome(const TempHome&) = delete;
  TempHome& operator=(const TempHome&) = delete;
};

}  // namespace ddl::test
