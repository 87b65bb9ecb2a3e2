// Connecting a Gloo group: the full mesh of TCP pairs, bounded by one deadline, rebuilt when
// a stray connection took a rank's place, with a clear message for a wrong interface, and
// each pair's addresses kept so an error that quotes an address can name the rank behind
// it. Internal to ProcessGroupGloo.
#pragma once

#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/tcp/attr.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ddl/dist/store/store.h>

namespace ddl::dist::detail {

// See Note [Naming the failed peer] in gloo_mesh.cpp.
class MeshContext final : public gloo::rendezvous::Context {
 public:
  using gloo::rendezvous::Context::Context;
  std::vector<std::vector<std::string>> peer_addresses;  // per rank, "[ip]:port"s; none for this rank

  // Publishes this rank's ends of its pairs and reads every peer's. Best effort: the
  // names are a diagnostic, so what cannot be read by `deadline` is left out.
  void exchange_addresses(const std::shared_ptr<Store>& store, std::chrono::steady_clock::time_point deadline);
  // After a peer failed with `failure`: when it was refused (or reset) on a port this rank
  // published, where the connection this rank accepted there came from (Note [Stray connections]):
  // (peer rank, "ip:port") per such pair, and the same as a sentence ("" for none).
  std::vector<std::pair<int, std::string>> strays_behind(Store& store, const std::string& failure) const;
  std::string stray_note(const std::shared_ptr<Store>& store, const std::string& failure) const;
  // The rank one of whose addresses `what` quotes (and that address), or -1.
  int peer_in_message(const std::string& what, std::string* address) const;
};

// Publishes `message` under the group's fatal key (GlooStoreAdapter::kFatalKey) unless some
// rank already did, so the other ranks stop waiting for this one. Best effort.
void report_startup_failure(Store& store, const std::string& message);

// "lo 127.0.0.1, eth0 10.0.0.5": this host's interfaces and their addresses.
std::string describe_interfaces();

// Connects rank `rank` of `size` to every other rank through `store`, listening on the
// address `attr` names. Returns once all pairs are connected and each has passed a
// handshake; a mesh a stray connection broke is rebuilt on new ports (Note [Mesh
// attempts] in gloo_mesh_attempts.cpp, logging a warning once). Throws ddl::Error by
// `deadline` (Gloo's own connect waits five times the operation timeout; this does not),
// or at once when `attr.iface` does not exist or another rank reported a fatal start-up
// error. On any failure it reports the error in `store` for the other ranks first.
std::shared_ptr<MeshContext> connect_mesh(const std::shared_ptr<Store>& store, int rank, int size,
                                          const gloo::transport::tcp::attr& attr, Millis op_timeout,
                                          std::chrono::steady_clock::time_point deadline,
                                          const std::string& log_prefix);

// "ip:port" of whatever is connected to this process at `local` ("" if nothing is).
std::string remote_end_at(const sockaddr_storage& local);
// Rank r's rendezvous entry for `rank` in `store`, or null when r has not published it.
std::unique_ptr<gloo::transport::tcp::Address> published_for(Store& store, int r, int rank, int size);
// When Gloo's connect failure `what` is a refusal by a rank's published address: " (rank r
// refused the connection on ip:port, ...)", else "".
std::string refused_note(Store& store, int rank, int size, const std::string& what);
// Gloo's rendezvous keys ("1", "rank_1") as rank numbers ("1").
std::string ranks_in(const std::string& keys);

// Whether `text` quotes `address` ("[127.0.0.1]:4087") as a whole token: not as the start
// of a longer port ("[127.0.0.1]:40873") nor the tail of a longer address.
bool mentions_address(const std::string& text, const std::string& address);

}  // namespace ddl::dist::detail
