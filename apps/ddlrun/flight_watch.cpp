// ddlrun's flight-recorder folder, SIGUSR2 round and verdict (see flight_watch.h).
#include "apps/ddlrun/flight_watch.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <ddl/trace/atomic_file.h>

namespace ddl::launcher {

std::string flight_base(const std::string& log_dir, std::string* made) {
  if (const char* v = std::getenv("DDL_FLIGHT_RECORDER"); v && std::string(v) == "0") return "";
  if (!log_dir.empty()) {
    const std::string dir = log_dir + "/flight";
    return mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST ? dir : "";
  }
  char dir[] = "/tmp/ddlrun-flight.XXXXXX";
  if (!mkdtemp(dir)) return "";
  *made = dir;
  return dir;
}

std::string host_note(const std::string& failure_note, const std::string& host) {
  std::string note, all = failure_note + ";";
  for (size_t at = 0, next; (next = all.find(';', at)) != std::string::npos; at = next + 1) {
    const std::string part = all.substr(at, next - at);
    const size_t text = part.find_first_not_of(' ');
    if (text != std::string::npos &&
        (part.find(host + "'s") != std::string::npos || part.find("on " + host + ",") != std::string::npos))
      note += (note.empty() ? "" : "; ") + part.substr(text);
  }
  return note;
}

FlightWatch::FlightWatch(const std::string& base, int attempt, int nworkers)
    : asked_(nworkers, false), answered_(nworkers, false) {
  if (base.empty()) return;
  const std::string dir = base + "/attempt" + std::to_string(attempt);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // a previous job's dumps in a reused --log-dir
  // 0700: only this user writes there (dumps are renamed into place: dist/flight/recorder.cpp).
  if (mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) dir_ = dir;
}

namespace {

// The parent of `pid` from /proc/PID/stat (field 4, after the command in parentheses), or 0.
pid_t parent_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  long ppid = 0;
  rest >> state >> ppid;
  return pid_t(ppid);
}

}  // namespace

pid_t FlightWatch::armed_pid(int rank, pid_t worker) const {
  std::ifstream in(dir_ + "/rank" + std::to_string(rank) + ".armed");
  if (!in) return 0;  // not armed: SIGUSR2 would end it
  long pid = 0;
  if (!(in >> pid) || pid <= 0) return worker;  // an older marker without a pid
  for (pid_t p = pid_t(pid), hops = 0; p > 1 && hops < 16; p = parent_of(p), ++hops)
    if (p == worker) return pid_t(pid);
  return 0;  // not one of this worker's processes: ask nobody
}

void FlightWatch::open_window(const std::vector<pid_t>& pids, std::chrono::milliseconds window) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  asked_at_ns_ = int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  for (size_t i = 0; i < pids.size() && i < asked_.size(); ++i) asked_[i] = pids[i] > 0;
  until_ = std::chrono::steady_clock::now() + window;
  asking_ = true;
}

bool FlightWatch::window_over(const std::vector<int>& ranks, const std::vector<bool>& running) {
  if (!asking_) return false;
  bool waiting = false;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (!asked_[i] || answered_[i]) continue;
    struct stat st {};
    const std::string path = dir_ + "/rank" + std::to_string(ranks[i]) + ".json";
    const bool dumped = stat(path.c_str(), &st) == 0;
    // A rank that dumped on its own failure and then exited has nothing more to say.
    if (dumped && (!running[i] || int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec >= asked_at_ns_))
      answered_[i] = true;
    else if (running[i])
      waiting = true;
  }
  if (waiting && std::chrono::steady_clock::now() < until_) return false;
  asking_ = false;
  return true;
}

std::string FlightWatch::verdict(std::vector<RankFacts> facts, const std::string& path) const {
  for (size_t i = 0; i < facts.size() && i < asked_.size(); ++i) {
    facts[i].asked = asked_[i];
    facts[i].answered = answered_[i];
  }
  read_dumps(dir_, facts);
  bool any = false;
  for (const RankFacts& f : facts) any |= f.dump.has_value();
  if (!any) return "";  // no rank reached ddl's process group: nothing to judge
  std::string text = decide(facts).text;
  if (path.empty()) text += "  (ddlrun --log-dir DIR keeps this verdict and the ranks' dumps)\n";
  if (!path.empty()) {
    try {
      files::write_atomically(path, text, "ddlrun: the verdict");
      text += "  (written to " + path + "; the ranks' dumps are in " + dir_ + ")\n";
    } catch (const std::exception& e) {
      text += "  (could not write " + path + ": " + e.what() + ")\n";
    }
  }
  return text;
}

}  // namespace ddl::launcher
