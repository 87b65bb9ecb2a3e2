// What ddlrun shows of its workers' output and where it keeps the rest: the console policy
// (rank 0 speaks for the job, or --all-ranks), the hidden tail of a failing rank, the
// progress bar's live relay, and the --log-dir files. It reads no file descriptors itself:
// the launcher hands it the bytes it read. One thread only.
#pragma once

#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "apps/ddlrun/terminal_text.h"

namespace ddl::launcher {

// Note [Worker output]
// Default mode: global rank 0's stdout and stderr reach ddlrun's stdout and stderr
// verbatim, byte for byte and without a prefix (as torchrun shows them): control bytes,
// NULs and an unfinished last line included (ddlrun ends that line only when it prints
// something after it). Other ranks' lines are hidden unless they come on stderr or look
// like a problem (looks_like_problem), and are then collapsed (collapse_line) and prefixed
// "[rank r/N] ". A rank that fails on its own (not stopped by ddlrun) also gets its last
// kTailLines hidden lines shown. --all-ranks: every line of every rank, collapsed, prefixed.
// Rank 0's lines are relayed whole, except on a terminal in default mode: there rank 0 gets
// DDL_PROGRESS=1 and its stdout passes at once, chunk by chunk (a progress bar's "\r"
// redraws included); every other console line then first clears the bar's line and then
// redraws it. Log files get every line collapsed. Workers' stdout is a pty (child_pty.h),
// so lines arrive as printed even when the program never flushes.
// Memory per stream is bounded: a line is collapsed as it arrives (its width, not its
// redraws, costs memory), cut with a marker past kMaxLineChars characters, and rank 0's
// verbatim line passes on in pieces of kMaxLineBytes when it has no newline.

enum class StreamKind { Out = 0, Err = 1 };

// Opens (truncating) DIR/rank<r>.log for each rank; std::runtime_error naming the file if not.
std::vector<std::shared_ptr<FILE>> open_rank_logs(const std::string& dir, const std::vector<int>& ranks);

struct RelayOptions {
  bool all_ranks = false;    // --all-ranks / --verbose
  bool console_tty = false;  // ddlrun's stdout is a terminal
  int world = 1;
  std::vector<int> ranks;                   // the global rank of each local worker
  std::vector<std::string> hosts;           // and the host it runs on
  std::string log_dir;                      // --log-dir ("": no files)
  std::vector<std::shared_ptr<FILE>> logs;  // open_rank_logs(log_dir, ranks), when log_dir is given
  std::string command;                      // for the log files' first line
};

class OutputRelay {
 public:
  static constexpr size_t kTailLines = 20;
  static constexpr size_t kMaxLineChars = size_t(1) << 20;      // a longer collapsed line is cut here
  static constexpr size_t kMaxLineBytes = size_t(1) << 20;      // rank 0's verbatim line is passed on in such pieces
  static constexpr size_t kMaxTailLineBytes = size_t(1) << 16;  // a hidden line is kept up to this

  // Writes each log's first line.
  explicit OutputRelay(RelayOptions opts);
  OutputRelay(const OutputRelay&) = delete;
  OutputRelay& operator=(const OutputRelay&) = delete;

  // DDL_PROGRESS for local worker i: "1" only for rank 0 drawing on ddlrun's terminal.
  std::string progress_env(int i) const;
  // A new attempt (restart): forgets unfinished lines and hidden tails, marks the logs.
  void begin_attempt(int attempt);
  void data(int i, StreamKind s, std::string_view bytes);
  // The stream ended: its unfinished line is logged (and relayed) as it is.
  void close(int i, StreamKind s);
  // Worker i failed on its own: shows its hidden last lines, prefixed.
  void show_hidden_tail(int i);
  // ddlrun's own line, to stderr (keeping a progress bar intact), and into worker i's log.
  void message(const std::string& line, int i = -1);
  // A line for worker i's log only (how it ended).
  void note(int i, const std::string& line);

 private:
  struct Stream {
    LineCollapser text;    // the line so far as the log and prefixed lines show it
    std::string verbatim;  // rank 0's line so far, relayed as it is when it ends
    bool started = false;  // bytes arrived since the last line ended
  };
  struct Worker {
    Stream streams[2];
    std::deque<std::string> hidden;
    FILE* log = nullptr;
    bool log_failed = false;
  };
  bool verbatim(int i, StreamKind s) const;
  bool live(int i, StreamKind s) const;
  bool wants_text(int i, StreamKind s) const;
  std::string prefix(int i) const;
  void feed(int i, StreamKind s, std::string_view segment);
  void end_line(int i, StreamKind s);
  void text_line(int i, StreamKind s, std::string text);
  void live_bytes(std::string_view bytes);
  void log_line(int i, std::string_view text);
  void console_line(FILE* sink, std::string_view text);
  void open_line(StreamKind s, std::string_view bytes);
  void end_open_line();
  void put(FILE* sink, std::string_view text);
  void flush();

  RelayOptions opts_;
  std::vector<Worker> workers_;
  // Rank 0's verbatim stream that left the console mid-line (-1: none); while it is the live
  // stdout, bar_ holds what that line shows since its last "\r" (bar_ok_: short enough to redraw).
  int open_stream_ = -1;
  bool bar_live_ = false;
  bool bar_ok_ = true;
  std::string bar_;
  FILE* last_sink_ = nullptr;
  // stdout and stderr are one file (a terminal, or 2>&1): a line on either lands after
  // rank 0's unfinished one, which must end first. Separate files keep rank 0's bytes as sent.
  bool one_console_ = true;
};

}  // namespace ddl::launcher
