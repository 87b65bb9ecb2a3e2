// ddlrun's verdict on a failed job: which rank stopped first, at which collective, on which
// host, and whether the ranks disagreed on the collective (a desync) or one never arrived (a
// stall). It reads the ranks' flight-recorder dumps (dist/flight/recorder.h) and what the
// launcher saw of each rank (stopped, silent after SIGUSR2, its exit). A rank with no dump is
// evidence too: the others' dumps show where they waited for it. Pure functions, no I/O but
// read_dumps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddl::launcher {

struct DumpEntry {
  int group = 0;
  uint64_t seq = 0;
  std::string op, desc, state;  // state: started, completed, failed
  bool p2p = false;
  int peer = -1;
  int64_t start_ns = 0, end_ns = 0;
};

struct DumpGroup {
  int id = 0, rank = 0, size = 0;
  int64_t last_completed = 0;
  int suspect = -1;  // whom the rank blamed after its timeout (dist/flight/laggard.h)
  std::string suspect_note;
};

struct RankDump {
  int rank = -1;
  std::string host, reason, failure;
  int64_t time_ns = 0;
  std::vector<DumpGroup> groups;
  std::vector<DumpEntry> entries;
};

// Parses one dump; throws std::runtime_error naming what is wrong.
RankDump parse_dump(const std::string& json);

struct RankFacts {
  int rank = 0;
  std::string host;
  std::optional<RankDump> dump;
  bool stopped = false;      // the launcher saw it stopped (SIGSTOP: frozen)
  bool asked = false;        // it was sent SIGUSR2 when the job was judged hung
  bool answered = false;     // and dumped within the window
  std::string exit;          // "exited with status 1", "was killed by signal 9 (SIGKILL)"
  bool by_launcher = false;  // ddlrun stopped it: its exit is not its own
  std::string host_note;     // what the launcher knows of its host, e.g. "host1's link is down"
};

struct Verdict {
  enum Kind { Unknown, Desync, Stall } kind = Unknown;
  int rank = -1;  // the rank that stopped first
  std::string host, op;
  uint64_t seq = 0;  // 0 with op "rendezvous": before the first collective
  std::string why;   // one line: how the evidence points at it
  std::string text;  // the whole verdict, several lines
};

Verdict decide(const std::vector<RankFacts>& ranks);

// Reads DIR/rank<r>.json for each of `facts` (a missing or broken file leaves dump empty).
void read_dumps(const std::string& dir, std::vector<RankFacts>& facts);

}  // namespace ddl::launcher
