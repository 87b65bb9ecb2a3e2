// The pieces of connecting a Gloo group (see gloo_mesh.h): interface descriptions, fatal
// start-up errors shared through the store, the pairs' addresses and what they tell about
// refused and stray connections. The attempts themselves are in gloo_mesh_attempts.cpp.
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
#include <fstream>
#include <map>
#include <sstream>

#include <ddl/base/error.h>
#include <ddl/dist/gloo/gloo_collectives.h>
#include <ddl/dist/gloo/gloo_mesh.h>
#include <ddl/dist/store/socket.h>

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

// "a.b.c.d:port" from /proc/net/tcp's "0100007F:88A3" (the address as the kernel's u32
// printed in hex, the port in host order), or the IPv6 form (four such u32s); false if bad.
bool parse_proc_net_end(const std::string& text, sockaddr_storage* out) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos || (colon != 8 && colon != 32)) return false;
  *out = {};
  const int port = std::stoi(text.substr(colon + 1), nullptr, 16);
  if (colon == 8) {
    auto& in = reinterpret_cast<sockaddr_in&>(*out);
    in.sin_family = AF_INET;
    in.sin_port = htons(static_cast<uint16_t>(port));
    in.sin_addr.s_addr = static_cast<uint32_t>(std::stoul(text.substr(0, 8), nullptr, 16));
  } else {
    auto& in6 = reinterpret_cast<sockaddr_in6&>(*out);
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(static_cast<uint16_t>(port));
    for (int i = 0; i < 4; ++i) {
      const uint32_t word = static_cast<uint32_t>(std::stoul(text.substr(8 * i, 8), nullptr, 16));
      std::memcpy(in6.sin6_addr.s6_addr + 4 * i, &word, 4);
    }
  }
  return true;
}

// "ip:port" ("[ip]:port" for IPv6), as dist/store/socket.h's peer_address spells it.
std::string end_text(const sockaddr_storage& ss) {
  char ip[INET6_ADDRSTRLEN] = "?";
  if (ss.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(ss);
    inet_ntop(AF_INET6, &a.sin6_addr, ip, sizeof ip);
    return "[" + std::string(ip) + "]:" + std::to_string(ntohs(a.sin6_port));
  }
  const auto& a = reinterpret_cast<const sockaddr_in&>(ss);
  inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
  return std::string(ip) + ":" + std::to_string(ntohs(a.sin_port));
}

// The remote end of a connection at `local` in /proc/net/tcp{,6}: also one this process
// has closed already (FIN_WAIT, TIME_WAIT), as Gloo does with a mesh it gave up on.
std::string remote_end_in_proc_net(const sockaddr_storage& local) {
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream f(table);
    std::string line;
    std::getline(f, line);  // the header
    while (std::getline(f, line)) {
      std::istringstream in(line);
      std::string slot, mine, theirs, state;
      sockaddr_storage a{}, b{};
      if (!(in >> slot >> mine >> theirs >> state) || state == "0A") continue;  // 0A: LISTEN
      try {
        if (parse_proc_net_end(mine, &a) && same_end(a, local) && parse_proc_net_end(theirs, &b)) return end_text(b);
      } catch (const std::exception&) {  // a malformed line: not ours
      }
    }
  }
  return "";
}

}  // namespace

// Gloo keeps its pairs' sockets private, so this looks through the process's descriptors,
// and then through the kernel's table (the pair may be closed by now).
std::string remote_end_at(const sockaddr_storage& local) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const int fd = std::atoi(entry.path().filename().c_str());
    sockaddr_storage ss{}, peer{};
    socklen_t len = sizeof ss, peer_len = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0 || !same_end(ss, local)) continue;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0) return peer_address(fd);
  }
  return remote_end_in_proc_net(local);
}

// Gloo's key "<r>": one address per peer, in rank order.
std::unique_ptr<gloo::transport::tcp::Address> published_for(Store& store, int r, int rank, int size) {
  if (!store.check({std::to_string(r)})) return nullptr;
  const std::string all = store.get(std::to_string(r), Millis(0));
  const size_t entry = all.size() / (size - 1), k = rank < r ? rank : rank - 1;
  if (entry == 0 || entry > gloo::transport::Address::kMaxByteSize) return nullptr;
  return std::make_unique<gloo::transport::tcp::Address>(
      std::vector<char>(all.begin() + k * entry, all.begin() + (k + 1) * entry));
}

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
// that rank's place: the real peer's connect is refused at once (or, queued behind the
// stray, reset), while this side believes it is connected. Bytes the stray sends are read
// as Gloo messages; the opcodes Gloo does not know are dropped. It cannot be repaired
// inside Gloo, so ddl throws the attempt away: the mesh is formed in attempts (Note [Mesh
// attempts] in gloo_mesh_attempts.cpp), each on fresh ports, every pair checked by a
// handshake, and an attempt a stray broke is rebuilt on every rank until the rendezvous
// deadline. The rank that accepted the stray names its address in a warning (and, if the
// deadline passes, in the error): strays_behind reads it from the socket.
std::vector<std::pair<int, std::string>> MeshContext::strays_behind(Store& store, const std::string& failure) const {
  std::vector<std::pair<int, std::string>> out;
  // Refused: the stray was accepted before the peer connected. Reset: the peer's connect
  // was queued behind the stray and dropped when Gloo closed the listening socket (a busy
  // machine delays Gloo's accept until the peer has connected too).
  if (failure.find("Connection refused") == std::string::npos && failure.find("Connection reset") == std::string::npos)
    return out;
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    const auto mine = published_for(store, rank, r, size);
    // Only the pair whose published port refused or reset rank r (Gloo's message spells it
    // str()). This side accepted one connection there, and not rank r's.
    if (!mine || !mentions_address(failure, mine->str())) continue;
    if (std::string from = remote_end_at(mine->getSockaddr()); !from.empty()) out.emplace_back(r, from);
  }
  return out;
}

std::string MeshContext::stray_note(const std::shared_ptr<Store>& store, const std::string& failure) const {
  std::string note;
  for (const auto& [r, from] : strays_behind(*store, failure))
    note += "; the connection this rank accepted for rank " + std::to_string(r) + " came from " + from +
            ", not from rank " + std::to_string(r) + " (it was refused or reset): an unexpected connection from " +
            from + " took its place at once (see Note [Stray connections] in gloo_mesh.cpp)";
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

}  // namespace ddl::dist::detail
