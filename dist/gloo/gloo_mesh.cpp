// Connecting a Gloo group (see gloo_mesh.h): interface checks, the full mesh under one
// deadline, fatal start-up errors shared through the store, and the pairs' addresses.
#include "dist/gloo/gloo_mesh.h"

#include <arpa/inet.h>
#include <gloo/transport/pair.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/tcp/device.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <sstream>
#include <thread>

#include "dist/gloo/gloo_collectives.h"
#include "dist/store/socket.h"
#include "tensor/error.h"

namespace ddl::dist::detail {

namespace {
using Clock = std::chrono::steady_clock;

Millis remaining(Clock::time_point deadline) {
  return std::max(Millis(0), std::chrono::duration_cast<Millis>(deadline - Clock::now()));
}

bool same_end(const sockaddr_storage& a, const sockaddr_storage& b) {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET) {
    const auto &x = reinterpret_cast<const sockaddr_in&>(a), &y = reinterpret_cast<const sockaddr_in&>(b);
    return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr;
  }
  const auto &x = reinterpret_cast<const sockaddr_in6&>(a), &y = reinterpret_cast<const sockaddr_in6&>(b);
  return x.sin6_port == y.sin6_port && std::memcmp(&x.sin6_addr, &y.sin6_addr, sizeof x.sin6_addr) == 0;
}

// "ip:port" of whatever is connected to this process at `local` ("" if nothing is). Gloo
// keeps its pairs' sockets private, so this looks through the process's descriptors.
std::string remote_end_at(const sockaddr_storage& local) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const int fd = std::atoi(entry.path().filename().c_str());
    sockaddr_storage ss{}, peer{};
    socklen_t len = sizeof ss, peer_len = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0 || !same_end(ss, local)) continue;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0) return peer_address(fd);
  }
  return "";
}

// Rank r's rendezvous entry for `rank` (Gloo's key "<r>": one address per peer, in rank order).
std::unique_ptr<gloo::transport::tcp::Address> published_for(Store& store, int r, int rank, int size) {
  if (!store.check({std::to_string(r)})) return nullptr;
  const std::string all = store.get(std::to_string(r), Millis(0));
  const size_t entry = all.size() / (size - 1), k = rank < r ? rank : rank - 1;
  if (entry == 0 || entry > gloo::transport::Address::kMaxByteSize) return nullptr;
  return std::make_unique<gloo::transport::tcp::Address>(
      std::vector<char>(all.begin() + k * entry, all.begin() + (k + 1) * entry));
}

}  // namespace

bool mentions_address(const std::string& text, const std::string& address) {
  if (address.empty()) return false;
  const auto part_of_address = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == ':' || c == ']';
  };
  for (size_t pos = text.find(address); pos != std::string::npos; pos = text.find(address, pos + 1)) {
    const size_t end = pos + address.size();
    const bool starts = pos == 0 || !part_of_address(text[pos - 1]);
    const bool ends = end == text.size() || !std::isdigit(static_cast<unsigned char>(text[end]));
    if (starts && ends) return true;
  }
  return false;
}

// Note [Stray connections]: in this Gloo (the 2022 snapshot Debian packages) every pair
// listens on a port of its own, and Pair::handleListening accepts the first connection
// there, closes the listening socket and treats that connection as the peer: no handshake,
// in Gloo's own network thread, with no hook to check or refuse it. So any program that
// connects to a published port during rendezvous (a port scanner, a health check) takes
// that rank's place: the real peer's connect is refused at once, while this side believes
// it is connected. It cannot be repaired from outside short of tearing the whole mesh down
// and starting again on new ports. What ddl does instead is say so, truthfully and at once:
// the refused rank names the rank that refused it, and that rank, told through the store,
// names the address of the connection it accepted in the peer's place.
std::string MeshContext::stray_note(const std::shared_ptr<Store>& store, const std::string& failure) const {
  std::string note;
  if (failure.find("Connection refused") == std::string::npos) return note;
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    const auto mine = published_for(*store, rank, r, size);
    // Only the pair whose published port refused rank r (Gloo's message spells it str()).
    if (!mine || !mentions_address(failure, mine->str())) continue;
    const std::string from = remote_end_at(mine->getSockaddr());
    if (!from.empty())
      note += "; the connection this rank accepted for rank " + std::to_string(r) + " came from " + from +
              ", not from rank " + std::to_string(r) + " (it was refused): an unexpected connection from " + from +
              " took its place at once (see Note [Stray connections] in gloo_mesh.cpp)";
  }
  return note;
}

// Note [Naming the failed peer]: Gloo's TCP errors quote the address of the peer whose
// connection broke ("Read error [10.0.0.2]:41234: Connection reset by peer"). Depending on
// which side opened the connection, that is the peer's listening address (published in
// Gloo's rendezvous: store key "<rank>", one entry per peer) or the peer's end of the
// connection (often an ephemeral port only the peer knows). So after connecting, every
// rank publishes the local end of each of its connections too; with both, an address in
// an error maps to its rank. Timeouts ("Timed out waiting 1000ms for recv operation")
// quote no address: the message then names the ranks the operation talks to.
void MeshContext::exchange_addresses(const std::shared_ptr<Store>& store, Clock::time_point deadline) {
  peer_addresses.assign(size, {});
  if (size < 2) return;
  std::string mine;
  for (int r = 0; r < size; ++r) mine += (r == rank ? "" : getPair(r)->address().str()) + "\n";
  // Waits also end when another rank reports a fatal error (it will not publish its part).
  GlooStoreAdapter waits(store, deadline);
  const auto get = [&](const std::string& key) {
    waits.wait({key}, remaining(deadline));
    return store->get(key, remaining(deadline));
  };
  try {
    store->set("pair_addresses/" + std::to_string(rank), mine);
    for (int r = 0; r < size; ++r) {
      if (r == rank) continue;
      // Rank r's rendezvous entry for this rank (entries in rank order, skipping r).
      const std::string all = get(std::to_string(r));
      const size_t entry = all.size() / (size - 1), k = rank < r ? rank : rank - 1;
      if (entry > 0 && entry <= gloo::transport::Address::kMaxByteSize)
        peer_addresses[r].push_back(
            gloo::transport::tcp::Address(std::vector<char>(all.begin() + k * entry, all.begin() + (k + 1) * entry))
                .str());
      // Rank r's end of its connection to this rank.
      std::istringstream lines(get("pair_addresses/" + std::to_string(r)));
      std::string line;
      for (int j = 0; j <= rank && std::getline(lines, line); ++j)
        if (j == rank && !line.empty()) peer_addresses[r].push_back(line);
    }
  } catch (const PeerStartupError& e) {
    // The peer failed after this rank's pairs connected: to whom, then, did this rank connect?
    throw PeerStartupError(e.what() + stray_note(store, e.what()));
  } catch (const std::exception&) {
  }
}

int MeshContext::peer_in_message(const std::string& what, std::string* address) const {
  for (int r = 0; r < static_cast<int>(peer_addresses.size()); ++r)
    for (const std::string& a : peer_addresses[r])
      // "[127.0.0.1]:4087" must not match the start of "[127.0.0.1]:40873".
      if (mentions_address(what, a)) {
        *address = a;
        return r;
      }
  return -1;
}

void report_startup_failure(Store& store, const std::string& message) {
  try {
    if (!store.check({GlooStoreAdapter::kFatalKey})) store.set(GlooStoreAdapter::kFatalKey, message);
  } catch (const std::exception&) {  // the store is gone too: nobody is left to tell
  }
}

std::string describe_interfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "(getifaddrs failed)";
  std::map<std::string, std::string> by_name;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    std::string& entry = by_name[a->ifa_name];
    if (!a->ifa_addr || (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6)) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = a->ifa_addr->sa_family == AF_INET
                          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr)
                          : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr);
    inet_ntop(a->ifa_addr->sa_family, raw, text, sizeof text);
    entry += std::string(entry.empty() ? "" : " ") + text;
  }
  freeifaddrs(list);
  std::string out;
  for (const auto& [name, addrs] : by_name)
    out += (out.empty() ? "" : ", ") + name + " " + (addrs.empty() ? "(no address)" : addrs);
  return out.empty() ? "(none)" : out;
}

namespace {

// When Gloo's connect was refused by a rank's published address, names that rank and why
// that happens (see Note [Stray connections]).
std::string refused_note(Store& store, int rank, int size, const std::string& what) {
  if (what.find("Connection refused") == std::string::npos) return "";
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    const auto theirs = published_for(store, r, rank, size);
    // Gloo's message quotes Address::str(), so match that spelling.
    if (!theirs || !mentions_address(what, theirs->str())) continue;
    const auto& sa = theirs->getSockaddr();
    char ip[INET6_ADDRSTRLEN] = "?";
    inet_ntop(sa.ss_family,
              sa.ss_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in&>(sa).sin_addr)
                                      : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6&>(sa).sin6_addr),
              ip, sizeof ip);
    const int port = ntohs(sa.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(sa).sin_port
                                                   : reinterpret_cast<const sockaddr_in6&>(sa).sin6_port);
    return " (rank " + std::to_string(r) + " refused the connection on " + ip + ":" + std::to_string(port) +
           ", the port it published for this rank: it had exited, or had already accepted another connection "
           "there, which Gloo takes as this rank without a handshake; see docs/dist.md, \"Stray connections\")";
  }
  return "";
}

// Gloo's rendezvous keys are the ranks' numbers ("1", "rank_1"): name them as ranks.
std::string ranks_in(const std::string& keys) {
  std::string out;
  for (char c : keys)
    if (std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == ' ') out += c;
  return out;
}

std::shared_ptr<MeshContext> connect(const std::shared_ptr<Store>& store, int rank, int size,
                                     const gloo::transport::tcp::attr& attr, Millis op_timeout,
                                     Clock::time_point deadline, const std::string& where) {
  DDL_CHECK(attr.iface.empty() || if_nametoindex(attr.iface.c_str()) != 0, "network interface '", attr.iface,
            "' (DDL_GLOO_IFACE or GLOO_SOCKET_IFNAME) does not exist on this host; its interfaces are: ",
            describe_interfaces());
  std::shared_ptr<gloo::transport::Device> device;
  try {
    device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    DDL_CHECK(false, "cannot listen on ", where, " (this host's interfaces: ", describe_interfaces(), "): ", e.what());
  }
  auto ctx = std::make_shared<MeshContext>(rank, size);
  ctx->setTimeout(op_timeout);
  auto adapter = std::make_shared<GlooStoreAdapter>(store, deadline);
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> connected = done->get_future();
  // A thread of its own, so this rank stops waiting at the deadline even where Gloo's pair
  // connect would wait five times the operation timeout. The thread holds what it uses
  // and ends by itself on Gloo's deadline at the latest.
  std::thread([ctx, adapter, device, done]() mutable {
    try {
      ctx->connectFullMesh(*adapter, device);
      done->set_value();
    } catch (...) {
      done->set_exception(std::current_exception());
    }
  }).detach();
  bool in_time = connected.wait_until(deadline) == std::future_status::ready;
  if (in_time) {
    try {
      connected.get();
    } catch (const PeerStartupError&) {
      throw;
    } catch (const std::exception& e) {
      // A store wait that ran into the deadline is a timeout like any other, said below.
      DDL_CHECK(Clock::now() >= deadline, "connecting to the other ranks failed at once: ", e.what(),
                refused_note(*store, rank, size, e.what()));
      in_time = false;
    }
  }
  if (!in_time) {
    const std::string waiting = ranks_in(adapter->waiting_for());
    DDL_CHECK(false, "could not connect to the other ", size - 1, " rank(s) within ", op_timeout.count(), " ms: ",
              waiting.empty() ? "the connections to the addresses they published did not open (a firewall, an "
                                "address other hosts cannot reach, or ranks of another job?)"
                              : "still waiting for rank " + waiting +
                                    " to publish its address in the store (not started yet, or using another job's "
                                    "store?)");
  }
  ctx->exchange_addresses(store, deadline);
  return ctx;
}

}  // namespace

std::shared_ptr<MeshContext> connect_mesh(const std::shared_ptr<Store>& store, int rank, int size,
                                          const gloo::transport::tcp::attr& attr, Millis op_timeout,
                                          Clock::time_point deadline, const std::string& log_prefix) {
  const std::string where = attr.iface.empty() ? "address " + attr.hostname : "interface " + attr.iface;
  try {
    return connect(store, rank, size, attr, op_timeout, deadline, where);
  } catch (const PeerStartupError& e) {
    throw Error(log_prefix + " ProcessGroupGloo: stopping, another rank could not start: " + e.what());
  } catch (const std::exception& e) {
    const std::string msg = log_prefix + " ProcessGroupGloo (" + where + "): " + e.what();
    report_startup_failure(*store, msg);
    throw Error(msg);
  }
}

}  // namespace ddl::dist::detail
