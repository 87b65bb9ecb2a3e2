// OutputRelay (see output_relay.h and its Note [Worker output]).
#include "apps/ddlrun/output_relay.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <ddl/trace/atomic_file.h>

namespace ddl::launcher {
namespace {

constexpr size_t kPiece = size_t(1) << 16;  // how much of a chunk is taken in before checking the caps
constexpr size_t kMaxBar = 4096;            // a longer "bar" is not redrawn after other lines

FILE* sink(StreamKind s) { return s == StreamKind::Err ? stderr : stdout; }

std::string log_path(const std::string& dir, int rank) { return dir + "/rank" + std::to_string(rank) + ".log"; }

}  // namespace

std::vector<std::shared_ptr<FILE>> open_rank_logs(const std::string& dir, const std::vector<int>& ranks) {
  std::vector<std::shared_ptr<FILE>> logs;
  for (int r : ranks) {
    const std::string path = log_path(dir, r);
    // Never through a symlink or into a FIFO someone placed in the directory.
    const int fd = ddl::files::open_for_writing(path, O_CREAT | O_TRUNC, "--log-dir");
    FILE* f = ::fdopen(fd, "w");
    if (!f) {
      ::close(fd);
      throw std::runtime_error("--log-dir: cannot write " + path + ": " + std::strerror(errno));
    }
    logs.emplace_back(f, std::fclose);
  }
  return logs;
}

OutputRelay::OutputRelay(RelayOptions opts) : opts_(std::move(opts)), workers_(opts_.ranks.size()) {
  struct stat out = {};
  struct stat err = {};
  if (fstat(STDOUT_FILENO, &out) == 0 && fstat(STDERR_FILENO, &err) == 0)
    one_console_ = out.st_dev == err.st_dev && out.st_ino == err.st_ino;
  for (size_t i = 0; i < workers_.size() && i < opts_.logs.size(); ++i) {
    workers_[i].log = opts_.logs[i].get();
    log_line(int(i), "ddlrun: rank " + std::to_string(opts_.ranks[i]) + "/" + std::to_string(opts_.world) +
                         " on host " + opts_.hosts[i] + ": " + opts_.command);
  }
  flush();
}

std::string OutputRelay::progress_env(int i) const { return live(i, StreamKind::Out) ? "1" : "0"; }

bool OutputRelay::verbatim(int i, StreamKind) const { return !opts_.all_ranks && opts_.ranks[i] == 0; }

bool OutputRelay::live(int i, StreamKind s) const {
  return verbatim(i, s) && s == StreamKind::Out && opts_.console_tty;
}

// Whether the collapsed text of stream s is needed: for the log, or for prefixed and hidden lines.
bool OutputRelay::wants_text(int i, StreamKind s) const {
  const Worker& w = workers_[i];
  return (w.log && !w.log_failed) || !verbatim(i, s);
}

std::string OutputRelay::prefix(int i) const {
  return "[rank " + std::to_string(opts_.ranks[i]) + "/" + std::to_string(opts_.world) + "] ";
}

void OutputRelay::begin_attempt(int attempt) {
  end_open_line();
  for (size_t i = 0; i < workers_.size(); ++i) {
    Worker& w = workers_[i];
    for (Stream& st : w.streams) st = Stream{};
    w.hidden.clear();
    if (attempt > 0)
      log_line(int(i), "ddlrun: attempt " + std::to_string(attempt) + " (restart " + std::to_string(attempt) + ")");
  }
  flush();
}

void OutputRelay::data(int i, StreamKind s, std::string_view bytes) {
  if (live(i, s)) live_bytes(bytes);
  // Only the new bytes are searched for line ends.
  size_t pos = 0;
  while (pos < bytes.size()) {
    const void* nl = std::memchr(bytes.data() + pos, '\n', bytes.size() - pos);
    const size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - bytes.data()) : bytes.size();
    feed(i, s, bytes.substr(pos, end - pos));
    if (!nl) break;
    end_line(i, s);
    pos = end + 1;
  }
  flush();
}

// Part of a line (no "\n"): taken in piece by piece, so neither buffer outgrows its cap.
void OutputRelay::feed(int i, StreamKind s, std::string_view segment) {
  Stream& st = workers_[i].streams[int(s)];
  const bool text = wants_text(i, s), whole = verbatim(i, s) && !live(i, s);
  for (size_t at = 0; at < segment.size(); at += kPiece) {
    const std::string_view piece = segment.substr(at, kPiece);
    st.started = true;
    if (text) {
      st.text.feed(piece);
      if (st.text.width() >= kMaxLineChars) {
        text_line(i, s,
                  st.text.text() + " [ddlrun: line longer than " + std::to_string(kMaxLineChars) +
                      " characters; continued on the next line]");
        st.text.clear();
      }
    }
    if (whole) {
      st.verbatim.append(piece);
      if (st.verbatim.size() >= kMaxLineBytes) {
        open_line(s, st.verbatim);
        st.verbatim.clear();
      }
    }
  }
}

void OutputRelay::end_line(int i, StreamKind s) {
  Stream& st = workers_[i].streams[int(s)];
  if (wants_text(i, s)) text_line(i, s, st.text.text());
  st.text.clear();
  if (verbatim(i, s) && !live(i, s)) {
    if (open_stream_ == int(s)) {  // its first bytes are out already
      put(sink(s), st.verbatim);
      put(sink(s), "\n");
      open_stream_ = -1;
    } else {
      console_line(sink(s), st.verbatim);
    }
    st.verbatim.clear();
  }
  st.started = false;
}

// A collapsed line: into the log; unless rank 0 relays it verbatim, shown prefixed or kept hidden.
void OutputRelay::text_line(int i, StreamKind s, std::string text) {
  Worker& w = workers_[i];
  log_line(i, text);
  if (verbatim(i, s)) return;
  if (opts_.all_ranks || s == StreamKind::Err || looks_like_problem(text)) {
    console_line(sink(s), prefix(i) + text);
    return;
  }
  if (text.size() > kMaxTailLineBytes) {
    text.resize(kMaxTailLineBytes);
    text += " [ddlrun: cut]";
  }
  w.hidden.push_back(std::move(text));
  if (w.hidden.size() > kTailLines) w.hidden.pop_front();
}

void OutputRelay::close(int i, StreamKind s) {
  Stream& st = workers_[i].streams[int(s)];
  if (st.started) {
    if (wants_text(i, s)) text_line(i, s, st.text.text());
    if (verbatim(i, s) && !live(i, s) && !st.verbatim.empty()) open_line(s, st.verbatim);
    st = Stream{};
  }
  if (live(i, s)) bar_live_ = false;  // the bar stays as drawn; a later line starts below it
  flush();
}

void OutputRelay::show_hidden_tail(int i) {
  Worker& w = workers_[i];
  for (StreamKind s : {StreamKind::Out, StreamKind::Err}) {
    Stream& st = w.streams[int(s)];
    if (!st.started || verbatim(i, s)) continue;
    text_line(i, s, st.text.text());
    st = Stream{};
  }
  if (w.hidden.empty()) return;
  console_line(stderr, "ddlrun: rank " + std::to_string(opts_.ranks[i]) + "'s last " + std::to_string(w.hidden.size()) +
                           " lines of output (not shown before):");
  for (const auto& text : w.hidden) console_line(stderr, prefix(i) + text);
  w.hidden.clear();
  flush();
}

void OutputRelay::message(const std::string& text, int i) {
  console_line(stderr, text);
  if (i >= 0) log_line(i, text);
  flush();
}

void OutputRelay::note(int i, const std::string& text) {
  log_line(i, text);
  flush();
}

// Rank 0's stdout on ddlrun's terminal, as it comes; bar_ follows what its last line shows.
void OutputRelay::live_bytes(std::string_view bytes) {
  if (bytes.empty()) return;
  if (open_stream_ == int(StreamKind::Err)) end_open_line();
  put(stdout, bytes);
  const size_t k = bytes.find_last_of("\r\n");
  if (k == std::string_view::npos) {
    if (bar_ok_) bar_.append(bytes);
  } else {
    bar_.assign(bytes.substr(k + 1));
    bar_ok_ = true;
  }
  if (bar_.size() > kMaxBar) {
    bar_ok_ = false;
    bar_.clear();
  }
  if (bytes.back() == '\n') {
    open_stream_ = -1;
    bar_live_ = false;
  } else {
    open_stream_ = int(StreamKind::Out);
    bar_live_ = true;
  }
}

// Rank 0's stream s writes `bytes` with no line end after them.
void OutputRelay::open_line(StreamKind s, std::string_view bytes) {
  if (open_stream_ >= 0 && open_stream_ != int(s)) end_open_line();
  put(sink(s), bytes);
  open_stream_ = int(s);
}

// A line of its own. While rank 0's bar is drawn: clear the bar's line, print, redraw the
// bar; after another unfinished line of rank 0: start below it.
void OutputRelay::console_line(FILE* to, std::string_view text) {
  if (open_stream_ == int(StreamKind::Out) && bar_live_ && bar_ok_) {
    put(stdout, "\r\033[K");
    put(to, text);
    put(to, "\n");
    put(stdout, bar_);
    return;
  }
  if (open_stream_ >= 0 && (one_console_ || sink(StreamKind(open_stream_)) == to)) end_open_line();
  put(to, text);
  put(to, "\n");
}

void OutputRelay::end_open_line() {
  if (open_stream_ < 0) return;
  put(sink(StreamKind(open_stream_)), "\n");
  open_stream_ = -1;
  bar_live_ = false;
  bar_ok_ = true;
  bar_.clear();
}

void OutputRelay::log_line(int i, std::string_view text) {
  if (i < 0) return;
  Worker& w = workers_[i];
  if (!w.log || w.log_failed) return;
  std::fwrite(text.data(), 1, text.size(), w.log);
  std::fputc('\n', w.log);
}

// Console writes stay in stdio's buffers until flush(), once per chunk read; switching
// between stdout and stderr flushes the other first, so a shared terminal keeps the order.
void OutputRelay::put(FILE* to, std::string_view text) {
  if (last_sink_ && last_sink_ != to) std::fflush(last_sink_);
  last_sink_ = to;
  std::fwrite(text.data(), 1, text.size(), to);
}

// A log that cannot be written (a full disk) is said once, then left alone.
void OutputRelay::flush() {
  std::fflush(stdout);
  std::fflush(stderr);
  for (size_t i = 0; i < workers_.size(); ++i) {
    Worker& w = workers_[i];
    if (!w.log || w.log_failed) continue;
    const bool failed = std::fflush(w.log) != 0 || std::ferror(w.log);
    const int err = errno;
    if (!failed) continue;
    w.log_failed = true;
    console_line(stderr, "ddlrun: --log-dir: writing " + log_path(opts_.log_dir, opts_.ranks[i]) + " failed (" +
                             std::strerror(err) + "); rank " + std::to_string(opts_.ranks[i]) +
                             "'s log is incomplete from here");
    std::fflush(stderr);
  }
}

}  // namespace ddl::launcher
