// Setting up the shared-memory segment (see shm_segment.h and shm_all_reduce.h): sizes,
// mapping, /proc identities, futexes, and ShmAllReduce::connect, which agrees through the
// store whether every rank can use it.
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <random>
#include <sstream>
#include <utility>

#include <ddl/dist/transport/shm_all_reduce.h>
#include <ddl/dist/transport/shm_segment.h>

namespace ddl::dist::detail {

size_t shm_data_offset() { return (sizeof(ShmHeader) + kShmPage - 1) / kShmPage * kShmPage; }

// 4 MiB pieces for small groups, keeping the segment near 32 MiB for large ones (Docker's
// default /dev/shm is 64 MiB).
size_t shm_slot_bytes(int n) {
  size_t s = (16u << 20) / static_cast<size_t>(n);
  s = std::clamp<size_t>(s, 256u << 10, 4u << 20);
  return s / kShmPage * kShmPage;
}

size_t shm_segment_bytes(int n) { return shm_data_offset() + 2 * static_cast<size_t>(n) * shm_slot_bytes(n); }

ProcState read_proc_stat(int pid) {
  ProcState p;
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return p;
  const auto close = line.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return p;
  std::istringstream in(line.substr(close + 1));
  std::string skip;
  in >> p.state;                            // field 3
  for (int i = 4; i < 22; ++i) in >> skip;  // fields 4..21
  in >> p.start_time;                       // field 22
  p.found = static_cast<bool>(in);
  return p;
}

void futex_wait(std::atomic<uint32_t>* word, uint32_t seen, Millis slice) {
  timespec ts{static_cast<time_t>(slice.count() / 1000), static_cast<long>(slice.count() % 1000) * 1000000};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, seen, &ts, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

namespace {
std::string sys_error(const std::string& what) { return what + ": " + std::strerror(errno); }

constexpr const char* kNamePrefix = "ddl-shm-";

bool parse_u64(const std::string& text, int base, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  char* end = nullptr;
  errno = 0;
  *out = std::strtoull(text.c_str(), &end, base);
  return errno == 0 && *end == '\0' && std::isxdigit(static_cast<unsigned char>(text[0]));
}
}  // namespace

std::string shm_segment_name(uint64_t nonce) {
  std::ostringstream n;
  n << kNamePrefix << getpid() << "-" << read_proc_stat(getpid()).start_time << "-" << std::hex << nonce;
  if (const char* run = std::getenv("DDL_RUN_ID"); run && *run) {
    std::string id(run);
    id.resize(std::min<size_t>(id.size(), 64));  // names stay far below NAME_MAX
    for (char& c : id)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') c = '_';
    n << "-" << id;
  }
  return n.str();
}

bool parse_shm_segment_name(const std::string& file_name, ShmSegmentName* out) {
  if (file_name.rfind(kNamePrefix, 0) != 0) return false;
  std::vector<std::string> parts;
  std::istringstream in(file_name.substr(std::strlen(kNamePrefix)));
  for (std::string part; std::getline(in, part, '-');) parts.push_back(part);
  uint64_t pid = 0, start = 0, nonce = 0;
  if (parts.size() < 2 || !parse_u64(parts[0], 10, &pid) || pid == 0 || pid > INT_MAX) return false;
  ShmSegmentName n;
  n.pid = static_cast<int>(pid);
  if (parts.size() == 2) {  // ddl-shm-<pid>-<nonce>, before start times were recorded
    if (!parse_u64(parts[1], 16, &nonce)) return false;
  } else {
    if (parts.size() > 4 || !parse_u64(parts[1], 10, &start) || !parse_u64(parts[2], 16, &nonce)) return false;
    n.start_time = start;
    if (parts.size() == 4) n.run_id = parts[3];
  }
  *out = n;
  return true;
}

bool shm_creator_dead(const ShmSegmentName& n) {
  const ProcState p = read_proc_stat(n.pid);
  return !p.found || p.state == 'Z' || p.state == 'X' || (n.start_time != 0 && p.start_time != n.start_time);
}

std::vector<std::string> remove_shm_segments(const std::string& run_id) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", ec)) {
    const std::string file = entry.path().filename().string();
    ShmSegmentName n;
    if (!parse_shm_segment_name(file, &n)) continue;
    const bool ours = run_id.empty() ? shm_creator_dead(n) : n.run_id == run_id;
    if (ours && shm_unlink(("/" + file).c_str()) == 0) removed.push_back(file);
  }
  return removed;
}

std::string map_segment(const std::string& name, size_t bytes, bool create, void** out, bool* absent) {
  int fd = shm_open(name.c_str(), create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
  if (fd < 0 && !create && errno == ENOENT) {
    if (absent) *absent = true;
    return "rank 0's segment is not in this host's /dev/shm (ranks on different hosts)";
  }
  if (fd < 0) return sys_error("shm_open(" + name + ")");
  std::string err;
  // Reserving the pages now turns a full /dev/shm into an error here, not a SIGBUS later.
  if (create) {
    if (int e = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); e != 0)
      err = "reserving " + std::to_string(bytes >> 20) + " MiB in /dev/shm: " + std::strerror(e);
  }
  if (err.empty()) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
      err = sys_error("mmap(" + name + ")");
    else
      *out = p;
  }
  close(fd);
  if (!err.empty() && create) shm_unlink(name.c_str());
  return err;
}

std::string shm_agree(Store& store, const std::string& step, int rank, int size, const std::string& mine,
                      bool mine_failed, Millis timeout, bool* first_failed) {
  store.set("ddl-shm/" + step + "/" + std::to_string(rank),
            mine.empty() ? "ok" : (mine_failed ? "error " : "no ") + mine);
  for (int q = 0; q < size; ++q) {
    std::string v = store.get("ddl-shm/" + step + "/" + std::to_string(q), timeout);
    if (v == "ok") continue;
    *first_failed = v.rfind("error ", 0) == 0;
    return "rank " + std::to_string(q) + ": " + v.substr(v.find(' ') + 1);
  }
  return "";
}

// Note [Segment names]: rank 0 creates the segment under a fresh name and the others open it
// by that name; once every rank has mapped it, the name can go (mappings keep the memory).
// A rank 0 killed between creating it and the others mapping it (SIGKILL runs no destructor)
// used to leave it in /dev/shm for good. So rank 0 publishes the name in the store before it
// creates the segment, and every rank that read it unlinks it when set-up ends, whether it
// succeeded, failed or timed out waiting for a dead rank 0: the first unlink wins, the rest
// find nothing (ENOENT, ignored).
// If every rank is killed before set-up ends, nobody is left to unlink it. So the name says
// who made it and for which job: the creator's pid and start time (/proc/<pid>/stat field
// 22, which tells a reused pid apart) and ddlrun's DDL_RUN_ID. ddlrun removes its job's
// names once all its ranks have exited (and `ddlrun --cleanup` those of dead creators);
// under any other launcher, the next group set up on the host removes every ddl segment
// whose creator is gone before it creates its own. A creator in another pid namespace that
// shares this /dev/shm would look gone: its group then fails to map and falls back to TCP.
//
// Note [Why not shared memory]: ranks that keep Gloo's TCP ring say why, and the reason is
// either the set-up (DDL_SHM=0, too many ranks, a rank whose /dev/shm does not hold rank 0's
// segment because it runs on another host, peers in other pid namespaces) or a fault (rank 0
// could not create or size the segment, a rank could not map it). Only a fault is an error;
// the header of a job across hosts must not read like one (shm_open's ENOENT is expected there).
std::unique_ptr<ShmAllReduce> ShmAllReduce::connect(Store& store, int rank, int size, bool enabled, Millis timeout,
                                                    std::string* why, bool* failed) {
  const size_t bytes = shm_segment_bytes(size);
  std::string err = !enabled              ? "disabled (DDL_SHM=0)"
                    : size > kShmMaxRanks ? "more than " + std::to_string(kShmMaxRanks) + " ranks"
                                          : "";
  // See Note [Why not shared memory]: reasons in the set-up are not faults; the rest are.
  bool fault = false;
  void* base = nullptr;
  struct Unmap {  // until the object owns the mapping (a store timeout throws)
    void*& base;
    size_t bytes;
    ~Unmap() {
      if (base) munmap(base, bytes);
    }
  } unmap{base, bytes};
  // See Note [Segment names]: every rank that knows the name removes it when it is done
  // with set-up, however set-up ends; mappings outlive the name.
  struct Unlink {
    std::string name;
    ~Unlink() {
      if (!name.empty()) shm_unlink(name.c_str());
    }
  } unlink_later;
  std::string name;
  uint64_t nonce = 0;
  if (rank == 0) {
    if (err.empty()) {
      // What jobs killed during set-up left here (see Note [Segment names]).
      remove_shm_segments();
      nonce = std::random_device{}() * 0x100000001ull + std::random_device{}();
      name = "/" + shm_segment_name(nonce);
      store.set("ddl-shm/name", name);  // before it exists: see Note [Segment names]
      err = map_segment(name, bytes, /*create=*/true, &base);
      fault = !err.empty();
      if (err.empty()) unlink_later.name = name;
      // Test hooks (docs/dist.md, test-only): die, or wait to be killed, where only the store
      // and the name itself know the segment.
      if (err.empty() && std::getenv("DDL_TEST_SHM_KILL_AFTER_CREATE")) raise(SIGKILL);
      if (err.empty() && std::getenv("DDL_TEST_SHM_PAUSE_AFTER_CREATE")) {
        std::fprintf(stderr, "ddl test hook: rank 0 paused after creating /dev/shm%s\n", name.c_str());
        for (;;) pause();
      }
    } else {
      store.set("ddl-shm/name", "-");
    }
    if (err.empty()) {
      auto* h = new (base) ShmHeader{};
      h->magic = kShmMagic;
      h->nonce = nonce;
      h->size = size;
      h->slot_bytes = shm_slot_bytes(size);
    }
    std::ostringstream v;
    v << (err.empty() ? name : "-") << " " << nonce;
    store.set("ddl-shm/segment", v.str());
  }
  if (rank != 0) {
    // Known before rank 0 creates it, so a rank 0 that dies from here on leaves nothing behind.
    const std::string planned = store.get("ddl-shm/name", timeout);
    if (planned != "-") unlink_later.name = planned;
  }
  {
    std::istringstream v(store.get("ddl-shm/segment", timeout));
    v >> name >> nonce;
  }
  if (rank != 0 && err.empty()) {
    if (name == "-") err = "rank 0 could not create the segment";
    bool absent = false;
    if (err.empty()) err = map_segment(name, bytes, /*create=*/false, &base, &absent);
    fault = !err.empty() && !absent;
    // A different host or /dev/shm could still hold a segment of that name: check ours.
    const auto* h = static_cast<const ShmHeader*>(base);
    if (err.empty() && (h->magic != kShmMagic || h->nonce != nonce))
      err = "segment " + name + " is not rank 0's (another host or /dev/shm)";
    if (err.empty() && (h->size != size || h->slot_bytes != shm_slot_bytes(size))) {
      err = "rank 0 made the segment for " + std::to_string(h->size) + " ranks, this rank expects " +
            std::to_string(size);
      fault = true;
    }
  }
  if (err.empty()) {
    RankState& me = static_cast<ShmHeader*>(base)->ranks[rank];
    me.pid = getpid();
    me.start_time = read_proc_stat(getpid()).start_time;
    me.joined.store(1, std::memory_order_release);
  }
  bool first_failed = false;
  std::string first = shm_agree(store, "mapped", rank, size, err, fault, timeout, &first_failed);
  if (!unlink_later.name.empty()) shm_unlink(std::exchange(unlink_later.name, "").c_str());  // ENOENT is fine
  // Death detection reads /proc/<pid>: every peer's process must be visible from here.
  if (first.empty()) {
    auto* h = static_cast<ShmHeader*>(base);
    for (int q = 0; q < size && err.empty(); ++q) {
      const RankState& r = h->ranks[q];
      ProcState p = read_proc_stat(r.pid);
      if (r.joined.load(std::memory_order_acquire) != 1 || !p.found || p.start_time != r.start_time)
        err = "cannot see rank " + std::to_string(q) + "'s process (pid namespaces differ?)";
    }
    first = shm_agree(store, "visible", rank, size, err, false, timeout, &first_failed);
  }
  if (!first.empty()) {
    *why = first;
    if (failed) *failed = first_failed;
    return nullptr;
  }
  return std::unique_ptr<ShmAllReduce>(
      new ShmAllReduce(std::exchange(base, nullptr), bytes, rank, size, shm_slot_bytes(size)));
}

}  // namespace ddl::dist::detail
