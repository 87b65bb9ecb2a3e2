// ddlrun --hosts: N emulated hosts on this machine (docs/cluster.md). A Cluster builds the
// switch, every host's network namespace, link shaping, CPU cgroups and holder processes,
// records them for `ddlrun --cleanup`, and removes them all when destroyed. It does not
// start workers: the launcher does, calling enter() in each forked worker.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ddl/cluster/cgroup.h>
#include <ddl/cluster/holder.h>
#include <ddl/cluster/spec.h>
#include <ddl/cluster/state.h>

namespace ddl::cluster {

// What --hosts lacks to run here ("" when nothing): CAP_NET_ADMIN and CAP_SYS_ADMIN.
std::string missing_privilege();

// Runs fn on a thread that joined the network namespace at netns_path: sockets it makes
// belong to that namespace for their whole life. Rethrows what fn throws.
void run_in_netns(const std::string& netns_path, const std::function<void()>& fn);

class Cluster {
 public:
  // Builds every host; on failure removes what it made and throws SetupError.
  explicit Cluster(const Spec& spec);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  std::string host_name(int host) const { return "host" + std::to_string(host); }
  std::string netns_path(int host) const;
  // The switch's namespace, where port hI is host I's end of its cable.
  std::string switch_netns_path() const { return "/run/netns/" + job_ + "-sw"; }
  // "100mbit", or "100mbit (delay not emulated: no netem)": the worker's DDL_HOST_LINK.
  std::string link_description(int host) const;
  // One line per host for ddlrun's start-up message.
  std::string summary() const;
  // In a forked worker: joins the host (see enter_host in holder.h).
  void enter(int host) const;
  // Starts the --link-flap timers (T counts from this call): each takes its host's switch
  // port down at T and up again D later, saying so on stderr.
  void start_flaps();
  // What ddlrun adds when a worker fails: "" or, e.g., "; host1's link is down (--link-flap
  // host1=2,30)" (any host whose switch port is down, whoever took it down) and "; the OOM
  // killer ended a process on host1 (its --memory limit ...)".
  std::string failure_note(int host) const;
  // Elastic drills (cluster_power.cpp): power_off kills the host's init, ending every
  // process on it as a power cut would (its network namespace and link stay); power_on
  // starts a fresh init. Neither starts or reaps workers.
  void power_off(int host);
  void power_on(int host);
  bool powered(int host) const { return holders_.at(host).pid > 0; }
  // Removes everything; safe to call twice. Problems go to stderr.
  void teardown();

 private:
  void build();
  Spec spec_;
  std::string job_;
  bool netem_ = false;
  std::unique_ptr<StateFile> state_;
  std::vector<Holder> holders_;
  std::vector<std::vector<std::string>> cgroup_of_;   // per host: the cgroups its workers join
  std::vector<std::string> cpu_note_;                 // per host: how its quota was set
  std::vector<std::unique_ptr<MemoryGroup>> memory_;  // per host, null when no --memory
  std::vector<std::thread> flaps_;
  std::mutex flap_mu_;
  std::condition_variable flap_cv_;
  bool flaps_stop_ = false;
  std::unique_ptr<std::atomic<bool>[]> link_down_;  // per host, set while a flap holds it down
};

}  // namespace ddl::cluster
