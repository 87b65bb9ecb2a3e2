// Cluster: the order in which an emulated job's hosts are built and removed (see cluster.h).
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <random>
#include <thread>

#include <ddl/cluster/cgroup.h>
#include <ddl/cluster/cluster.h>
#include <ddl/cluster/command.h>
#include <ddl/cluster/network.h>
#include <ddl/trace/thread_name.h>

namespace ddl::cluster {

std::string missing_privilege() {
  std::ifstream f("/proc/self/status");
  unsigned long long eff = 0;
  for (std::string line; std::getline(f, line);)
    if (line.rfind("CapEff:", 0) == 0) eff = std::stoull(line.substr(7), nullptr, 16);
  std::string missing;
  if (!(eff & (1ULL << 12))) missing += "CAP_NET_ADMIN";  // capabilities(7): bit 12
  if (!(eff & (1ULL << 21))) missing += missing.empty() ? "CAP_SYS_ADMIN" : " and CAP_SYS_ADMIN";
  return missing;
}

void run_in_netns(const std::string& netns_path, const std::function<void()>& fn) {
  std::exception_ptr error;
  std::thread t([&] {
    trace::set_os_thread_name("ddlrun netns");
    try {
      const int fd = open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || setns(fd, CLONE_NEWNET) != 0)
        throw SetupError("cannot enter network namespace " + netns_path + ": " + std::strerror(errno));
      close(fd);
      fn();
    } catch (...) {
      error = std::current_exception();
    }
  });
  t.join();
  if (error) std::rethrow_exception(error);
}

namespace {

std::string make_job_id() {
  std::random_device rd;
  char buf[32];
  std::snprintf(buf, sizeof buf, "ddl%d-%04x", int(getpid()), rd() & 0xffff);
  return buf;
}

// A TCP connection to a closed port is refused at once when the peer is reachable.
bool reachable(const std::string& address) {
  const int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(9);
  inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  bool ok = false;
  if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno == EINPROGRESS) {
    pollfd p{s, POLLOUT, 0};
    if (poll(&p, 1, 5000) == 1) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
      ok = err == ECONNREFUSED || err == 0;
    }
  } else {
    ok = errno == ECONNREFUSED;
  }
  close(s);
  return ok;
}

}  // namespace

Cluster::Cluster(const Spec& spec) : spec_(spec), job_(make_job_id()) {
  try {
    build();
  } catch (...) {
    teardown();
    throw;
  }
}

Cluster::~Cluster() { teardown(); }

std::string Cluster::netns_path(int host) const { return "/run/netns/" + job_ + "-host" + std::to_string(host); }

std::string Cluster::link_description(int host) const {
  const Link& l = spec_.link_for(host);
  std::string d = l.rate;
  if (l.delay.empty() && l.loss.empty()) return d;
  if (netem_) return d + (l.delay.empty() ? "" : ", delay " + l.delay) + (l.loss.empty() ? "" : ", loss " + l.loss);
  return d + " (" + (l.delay.empty() ? "" : "delay ") + (l.delay.empty() || l.loss.empty() ? "" : "and ") +
         (l.loss.empty() ? "" : "loss ") + "not emulated: no netem)";
}

void Cluster::build() {
  const std::string sw = job_ + "-sw";
  state_ = std::make_unique<StateFile>(job_);
  make_switch(sw, *state_);
  bool wants_netem = false;
  for (int h = 0; h < spec_.hosts; ++h) {
    const Link& l = spec_.link_for(h);
    wants_netem |= !l.delay.empty() || !l.loss.empty();
  }
  if (wants_netem) {
    netem_ = netem_available(sw);
    if (!netem_)
      std::fprintf(stderr,
                   "ddlrun: this kernel has no netem qdisc (tc: \"Specified qdisc kind is unknown\"): the links get "
                   "their rate but no delay or loss (see docs/cluster.md)\n");
  }
  cgroup_of_.assign(spec_.hosts, {});
  cpu_note_.assign(spec_.hosts, "");
  memory_.resize(spec_.hosts);
  link_down_ = std::make_unique<std::atomic<bool>[]>(spec_.hosts);
  for (int h = 0; h < spec_.hosts; ++h) {
    const std::string ns = job_ + "-host" + std::to_string(h);
    make_host_network(sw, ns, h, *state_);
    shape_link(sw, ns, h, spec_.link_for(h), netem_);
    if (auto it = spec_.cpu_of.find(h); it != spec_.cpu_of.end()) {
      CpuGroup g = make_cpu_group(job_, h, it->second, *state_);
      cgroup_of_[h].push_back(g.dir);
      char frac[32];
      std::snprintf(frac, sizeof frac, "%g", it->second);
      cpu_note_[h] = std::string(frac) + " CPU via " + g.version;
    }
    if (auto it = spec_.memory_of.find(h); it != spec_.memory_of.end()) {
      memory_[h] = std::make_unique<MemoryGroup>(make_memory_group(job_, h, it->second, *state_));
      // Under cgroup v2 the CPU and memory limits share one folder: join it once.
      if (cgroup_of_[h].empty() || cgroup_of_[h][0] != memory_[h]->dir) cgroup_of_[h].push_back(memory_[h]->dir);
    }
    holders_.push_back(start_holder(ns, host_name(h)));
  }
  run_in_netns(netns_path(0), [&] {
    for (int h = 1; h < spec_.hosts; ++h)
      if (!reachable(host_address(h)))
        throw SetupError("host0 cannot reach " + host_name(h) + " (" + host_address(h) + ") over the bridge in " + sw +
                         ": see `ip -n " + sw + " link`");
  });
}

std::string Cluster::summary() const {
  std::string s = "ddlrun: job " + job_ + ": " + std::to_string(spec_.hosts) + " emulated hosts, " +
                  std::to_string(spec_.nproc_per_host) + " rank(s) each (docs/cluster.md; `ddlrun --cleanup` " +
                  "removes them if this launcher is killed)\n";
  for (int h = 0; h < spec_.hosts; ++h) {
    s += "ddlrun:   " + host_name(h) + " " + host_address(h) + " link " + link_description(h) + " both ways";
    if (!cpu_note_[h].empty()) s += ", cpu " + cpu_note_[h];
    if (memory_[h]) s += ", memory " + std::to_string(spec_.memory_of.at(h)) + " bytes via " + memory_[h]->version;
    if (auto it = spec_.flap_of.find(h); it != spec_.flap_of.end()) {
      char flap[96];
      std::snprintf(flap, sizeof flap, ", link down at %g s for %g s (--link-flap)", it->second.at,
                    it->second.down_for);
      s += flap;
    }
    s += "\n";
  }
  return s;
}

void Cluster::enter(int host) const { enter_host(holders_.at(host), cgroup_of_.at(host), host_name(host)); }

namespace {
// Sets the switch port `port` of namespace `netns_path` up or down (netdevice(7):
// SIOCSIFFLAGS), as `ip link set` does. No fork: ddlrun reaps every child as a worker.
std::string set_link(const std::string& netns_path, const std::string& port, bool up) {
  const int ns = open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) {  // this thread only
    if (ns >= 0) close(ns);
    return "cannot enter " + netns_path + ": " + std::strerror(errno);
  }
  close(ns);
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq ifr{};
  std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", port.c_str());
  std::string why;
  if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) != 0) {
    why = "cannot read the flags of " + port + ": " + std::strerror(errno);
  } else {
    ifr.ifr_flags = static_cast<short>(up ? ifr.ifr_flags | IFF_UP : ifr.ifr_flags & ~IFF_UP);
    if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
      why = "cannot set " + port + (up ? " up: " : " down: ") + std::strerror(errno);
  }
  if (fd >= 0) close(fd);
  return why;
}
}  // namespace

void Cluster::start_flaps() {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (const auto& [host, flap] : spec_.flap_of)
    flaps_.emplace_back([this, start, host = host, flap = flap] {
      const auto at = [&](double s) {
        return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
      };
      const std::string sw = switch_netns_path(), port = "h" + std::to_string(host);
      // The switch's port of the host, as a cut cable (tests/hosts/test_cut_link.sh).
      auto set = [&](bool up) {
        const std::string why = set_link(sw, port, up);
        std::fprintf(stderr, "ddlrun: --link-flap: %s's link %s at %.1f s%s%s\n", host_name(host).c_str(),
                     up ? "up" : "down", std::chrono::duration<double>(Clock::now() - start).count(),
                     why.empty() ? "" : ": ", why.c_str());
      };
      std::unique_lock<std::mutex> lock(flap_mu_);
      if (flap_cv_.wait_until(lock, at(flap.at), [this] { return flaps_stop_; })) return;
      link_down_[host] = true;
      set(false);
      if (flap_cv_.wait_until(lock, at(flap.at + flap.down_for), [this] { return flaps_stop_; })) return;
      set(true);
      link_down_[host] = false;
    });
}

namespace {
// Whether the switch port `port` of namespace `netns_path` is down (netdevice(7):
// SIOCGIFFLAGS), as `ip link show` says; false when it cannot be read.
bool port_down(const std::string& netns_path, const std::string& port) {
  bool down = false;
  try {
    run_in_netns(netns_path, [&] {
      const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      ifreq ifr{};
      std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", port.c_str());
      down = fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP);
      if (fd >= 0) close(fd);
    });
  } catch (const SetupError&) {
  }
  return down;
}
}  // namespace

std::string Cluster::failure_note(int host) const {
  std::string note;
  // A port taken down by --link-flap, or by anyone else (`ip link set` in the switch's
  // namespace, as an operator or a test cuts a cable).
  for (int h = 0; h < spec_.hosts; ++h) {
    const auto flap = spec_.flap_of.find(h);
    char text[160];
    if (flap != spec_.flap_of.end() && link_down_ && link_down_[h])
      std::snprintf(text, sizeof text, "; %s's link is down (--link-flap %s=%g,%g)", host_name(h).c_str(),
                    host_name(h).c_str(), flap->second.at, flap->second.down_for);
    else if (port_down(switch_netns_path(), "h" + std::to_string(h)))
      std::snprintf(text, sizeof text, "; %s's link is down (its switch port h%d is down, not by ddlrun)",
                    host_name(h).c_str(), h);
    else
      continue;
    note += text;
  }
  if (host >= 0 && host < static_cast<int>(memory_.size()) && memory_[host]) {
    const long long kills = oom_kills(*memory_[host]);
    if (kills > 0)
      note += "; the kernel's OOM killer ended " + std::to_string(kills) + " process(es) on " + host_name(host) +
              ", over its --memory limit of " + std::to_string(spec_.memory_of.at(host)) + " bytes (" +
              memory_[host]->events + ")";
  }
  return note;
}

void Cluster::teardown() {
  {
    std::lock_guard<std::mutex> lock(flap_mu_);
    flaps_stop_ = true;
  }
  flap_cv_.notify_all();
  for (std::thread& t : flaps_) t.join();
  flaps_.clear();
  for (Holder& h : holders_) stop_holder(h);
  holders_.clear();
  if (!state_) return;
  const std::vector<std::string> problems = remove_resources(state_->resources());
  for (const std::string& p : problems)
    std::fprintf(stderr, "ddlrun: cleaning up job %s: %s (then run `ddlrun --cleanup`)\n", job_.c_str(), p.c_str());
  if (problems.empty()) state_->remove();  // else kept for --cleanup
  state_.reset();
}

}  // namespace ddl::cluster
