// TCPStore: the rendezvous store over TCP. One process (rank 0 or the ddlrun launcher)
// runs a TCPStoreServer; every rank is a TCPStore client. The server binds to the address
// it is given, speaks the checked protocol of store_wire.h and, when given a job token,
// refuses any client that does not present it; bound beyond loopback it requires one
// (see Note [Job tokens] in dist/env.cpp). The token is checked, not encrypted: no TLS. Timeouts are enforced
// server-side (the reply says "timeout") and client-side (a dead server cannot hang a rank).
#pragma once

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ddl/dist/store/store.h>

namespace ddl::dist {

// What one server lets connections cost (docs/dist.md, "Store limits"). Until its HELLO is
// checked a connection holds no thread and at most one HELLO's bytes.
struct TCPStoreLimits {
  Millis hello_timeout{10000};    // a connection must complete its HELLO within this, or is closed
  int max_unauthenticated = 256;  // connections owing a HELLO; beyond it the oldest is closed
  int max_clients = 4096;         // authenticated connections, one thread each; beyond it refused
                                  // (lowered to fit the descriptor limit, whose soft value is raised to the hard one)
};

// Serves keys to any number of clients: one event-loop thread checks HELLOs (see Note
// [Store before authentication] in store_server.cpp), then one thread per authenticated
// connection, joined as soon as it ends.
class TCPStoreServer {
 public:
  // Binds host:port (port 0 = a free port, read it back with port()). Token "" = no check,
  // allowed only on a loopback address (else throws, saying how to give a token).
  TCPStoreServer(const std::string& host, int port, std::string token = "", TCPStoreLimits limits = {});
  ~TCPStoreServer();  // stops accepting, disconnects clients, joins threads
  TCPStoreServer(const TCPStoreServer&) = delete;
  TCPStoreServer& operator=(const TCPStoreServer&) = delete;
  int port() const { return port_; }
  // "ip:port" the listening socket is bound to ("127.0.0.1:29500", "0.0.0.0:29500", "[::1]:29500").
  std::string address() const;
  // Clients refused for a bad token or dropped for a malformed message (tests read it).
  int64_t rejected_clients() const { return rejected_.load(); }
  // The first rank refused for its token ("rank 1 on host n2 (connecting from ip:port)
  // presented a wrong job token"), or "" (Note [Refused ranks] in store_server.cpp).
  std::string refused_peer() const;
  // Connections open now (authenticated or still owing a HELLO), and ended ones whose
  // thread is not yet joined: at 0 every client thread is gone and its stack released.
  int64_t clients() const;
  // True when some rank reported that it could not start (a process group's "fatal" key).
  bool has_startup_failure();
  // Keeps serving for `at_least`, then until every client has disconnected or `max` has
  // passed; true when none is left. A launcher whose job failed calls it so that ranks on
  // other nodes, also those still starting, read why (the failed rank's message in the
  // store) instead of finding the store gone.
  bool linger(Millis max, Millis at_least = Millis(0)) const;

 private:
  struct Pending;  // a connection owing its HELLO (store_server.cpp)
  struct Client {  // an authenticated connection and the thread serving it
    int fd = -1;
    std::thread thread;
    std::atomic<bool> done{false};
  };
  void accept_loop();
  void accept_round(std::vector<Pending>& pending, std::vector<struct pollfd>& fds);
  void accept_new(std::vector<Pending>& pending);
  bool advance(Pending& p);  // reads what it can; false once the connection is finished with
  void admit(int fd, const std::string& peer);
  void drop(const std::string& peer, const std::string& why);
  void reap();  // joins the threads of connections that ended
  void serve(int fd, const std::string& peer);
  std::string handle(const std::string& body);  // one request → one reply frame
  // "" when a HELLO's token admits it, else why not ("wrong job token", a MUNGE refusal).
  std::string token_problem(const std::string& presented) const;

  int listen_fd_ = -1;
  int port_ = 0;
  std::string token_;
  TCPStoreLimits limits_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> rejected_{0};
  std::atomic<bool> refused_rank_{false};  // set once refused_ holds a refused rank
  mutable std::mutex refused_mu_;
  std::string refused_;
  std::atomic<int64_t> pending_count_{0};
  std::atomic<int64_t> reaping_{0};  // ended clients taken off clients_, not yet joined
  std::atomic<int64_t> logged_drops_{0};
  std::chrono::steady_clock::time_point accept_paused_until_{};  // acceptor thread only
  bool fd_exhaustion_logged_ = false;                            // acceptor thread only
  std::thread acceptor_;
  mutable std::mutex conn_mu_;
  std::list<Client> clients_;
  HashStore data_;  // the keys themselves, with blocking get/wait
};

struct TCPStoreOptions {
  Millis timeout = kDefaultTimeout;  // connect, get and wait
  std::string token;                 // must match the server's (LaunchEnv::job_token)
  std::string token_source;          // where it came from ("DDL_JOB_TOKEN"), for the refusal message
  std::string who;                   // "rank 1 on host n2": the server names it when it refuses the token
  bool is_server = false;            // also start a TCPStoreServer on host:port
  // When set, connecting ends by it rather than `timeout` from now, and so does every
  // request until set_deadline({}) (see Store::set_deadline).
  std::chrono::steady_clock::time_point deadline{};
};

class TCPStore : public Store {
 public:
  using Store::get;
  using Store::wait;
  // Connects to host:port (retrying until the timeout: the server may start later, or close
  // the connection before its HELLO's reply while flooded).
  // Throws at once, "the store at host:port refused this rank's job token", on a wrong token.
  TCPStore(std::string host, int port, TCPStoreOptions opts = {});
  ~TCPStore() override;
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key, Millis timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, Millis timeout) override;

  int port() const { return port_; }
  const std::string& host() const { return host_; }
  // IP of this machine's interface that reaches the server: a good Gloo hostname.
  std::string local_ip() const;
  TCPStoreServer* server() { return server_.get(); }

 private:
  // Sends one request, returns the reply body after its status byte; throws on errors.
  // `server_waits`: the server itself answers by `timeout` (get, wait); otherwise it answers
  // at once and `timeout` bounds a stalled server.
  std::string request(const std::string& frame, const char* what, const std::string& key_desc, Millis timeout,
                      bool server_waits);
  // Sends `frame` and reads the reply frame's body by `deadline`; throws on a lost connection.
  std::string exchange(const std::string& frame, std::chrono::steady_clock::time_point deadline);
  // The payload of a reply; throws naming what was refused, timed out or rejected.
  std::string check_reply(const std::string& body, const char* what, const std::string& key_desc, Millis timeout);

  std::string host_;
  int port_;
  std::unique_ptr<TCPStoreServer> server_;
  std::string token_note_;  // "(this rank has none)" or "(from DDL_JOB_TOKEN)"
  std::mutex mu_;           // one request on the socket at a time
  int fd_ = -1;
  std::string lost_;  // why the connection was closed (quoted by later requests)
};

}  // namespace ddl::dist
