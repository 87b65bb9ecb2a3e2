// What ddlrun shows of its workers' output and where it keeps the rest: the console policy
// (rank 0 speaks for the job, or --all-ranks), the hidden tail of a failing rank, the
// progress bar's live relay, and the --log-dir files. It reads no file descriptors itself:
// the launcher hands it the bytes it read. One thread only.
#pragma once

#include <cstdio>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace ddl::launcher {

// Note [Worker output]
// Default mode: global rank 0's stdout and stderr reach ddlrun's stdout and stderr as they
// are, without a prefix (as torchrun shows them); other ranks' lines are hidden unless they
// come on stderr or look like a problem (looks_like_problem), and are then prefixed
// "[rank r/N] ". A rank that fails on its own (not stopped by ddlrun) also gets its last
// kTailLines hidden lines shown. --all-ranks: every line of every rank, prefixed.
// When ddlrun's stdout is a terminal in default mode, rank 0 gets DDL_PROGRESS=1 and its
// stdout is relayed byte by byte (a progress bar's "\r" redraws included); every other
// console line first clears the bar's line and then redraws it. Everything else is
// relayed by complete lines, collapsed by collapse_line. Workers' stdout is a pty
// (child_pty.h), so lines arrive as printed even when the program never flushes.

enum class StreamKind { Out = 0, Err = 1 };

struct RelayOptions {
  bool all_ranks = false;    // --all-ranks / --verbose
  bool console_tty = false;  // ddlrun's stdout is a terminal
  int world = 1;
  std::vector<int> ranks;          // the global rank of each local worker
  std::vector<std::string> hosts;  // and the host it runs on
  std::string log_dir;             // --log-dir ("": no files)
  std::string command;             // for the log files' first line
};

class OutputRelay {
 public:
  static constexpr size_t kTailLines = 20;

  // Opens DIR/rank<r>.log for each local worker (std::runtime_error naming the file if not).
  explicit OutputRelay(RelayOptions opts);
  ~OutputRelay();
  OutputRelay(const OutputRelay&) = delete;
  OutputRelay& operator=(const OutputRelay&) = delete;

  // DDL_PROGRESS for local worker i: "1" only for rank 0 drawing on ddlrun's terminal.
  std::string progress_env(int i) const;
  // A new attempt (restart): forgets unfinished lines and hidden tails, marks the logs.
  void begin_attempt(int attempt);
  void data(int i, StreamKind s, std::string_view bytes);
  // The stream ended: its unfinished line is relayed as a line.
  void close(int i, StreamKind s);
  // Worker i failed on its own: shows its hidden last lines, prefixed.
  void show_hidden_tail(int i);
  // ddlrun's own line, to stderr (keeping a progress bar intact), and into worker i's log.
  void message(const std::string& line, int i = -1);

 private:
  struct Worker {
    std::string partial[2];
    std::deque<std::string> hidden;
    FILE* log = nullptr;
  };
  bool raw(int i, StreamKind s) const;
  std::string prefix(int i) const;
  void line(int i, StreamKind s, std::string_view raw_line);
  void console_line(FILE* sink, const std::string& text);
  void end_open_line();
  void put(FILE* sink, std::string_view text);
  void flush();

  RelayOptions opts_;
  std::vector<Worker> workers_;
  bool line_open_ = false;  // rank 0's raw output left the cursor mid-line (a bar)
  std::string bar_;         // what that line shows since its last "\r"
  FILE* last_sink_ = nullptr;
};

}  // namespace ddl::launcher
