// OutputRelay (see output_relay.h and its Note [Worker output]).
#include "apps/ddlrun/output_relay.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "apps/ddlrun/terminal_text.h"

namespace ddl::launcher {

OutputRelay::OutputRelay(RelayOptions opts) : opts_(std::move(opts)), workers_(opts_.ranks.size()) {
  if (opts_.log_dir.empty()) return;
  for (size_t i = 0; i < workers_.size(); ++i) {
    const std::string path = opts_.log_dir + "/rank" + std::to_string(opts_.ranks[i]) + ".log";
    workers_[i].log = std::fopen(path.c_str(), "we");
    if (!workers_[i].log) throw std::runtime_error("--log-dir: cannot write " + path + ": " + std::strerror(errno));
    std::fprintf(workers_[i].log, "ddlrun: rank %d/%d on host %s: %s\n", opts_.ranks[i], opts_.world,
                 opts_.hosts[i].c_str(), opts_.command.c_str());
    std::fflush(workers_[i].log);
  }
}

OutputRelay::~OutputRelay() {
  end_open_line();
  for (auto& w : workers_)
    if (w.log) std::fclose(w.log);
}

std::string OutputRelay::progress_env(int i) const { return raw(i, StreamKind::Out) ? "1" : "0"; }

bool OutputRelay::raw(int i, StreamKind s) const {
  return s == StreamKind::Out && !opts_.all_ranks && opts_.console_tty && opts_.ranks[i] == 0;
}

std::string OutputRelay::prefix(int i) const {
  if (!opts_.all_ranks && opts_.ranks[i] == 0) return "";
  return "[rank " + std::to_string(opts_.ranks[i]) + "/" + std::to_string(opts_.world) + "] ";
}

void OutputRelay::begin_attempt(int attempt) {
  end_open_line();
  for (auto& w : workers_) {
    w.partial[0].clear();
    w.partial[1].clear();
    w.hidden.clear();
    if (w.log && attempt > 0) {
      std::fprintf(w.log, "ddlrun: attempt %d (restart %d)\n", attempt, attempt);
      std::fflush(w.log);
    }
  }
}

void OutputRelay::data(int i, StreamKind s, std::string_view bytes) {
  if (raw(i, s)) {
    put(stdout, bytes);
    for (char c : bytes) {
      if (c == '\n') {
        line_open_ = false;
        bar_.clear();
      } else if (c == '\r') {
        bar_.clear();
      } else {
        line_open_ = true;
        bar_ += c;
      }
    }
  }
  std::string& partial = workers_[i].partial[int(s)];
  partial.append(bytes);
  size_t start = 0, nl;
  while ((nl = partial.find('\n', start)) != std::string::npos) {
    line(i, s, std::string_view(partial).substr(start, nl - start));
    start = nl + 1;
  }
  partial.erase(0, start);
  flush();
}

void OutputRelay::close(int i, StreamKind s) {
  std::string& partial = workers_[i].partial[int(s)];
  if (!partial.empty()) line(i, s, partial);
  partial.clear();
  if (raw(i, s)) end_open_line();
  flush();
}

void OutputRelay::line(int i, StreamKind s, std::string_view raw_line) {
  Worker& w = workers_[i];
  const std::string text = collapse_line(raw_line);
  if (w.log) std::fprintf(w.log, "%s\n", text.c_str());
  if (raw(i, s)) return;  // already on the console, byte by byte
  const bool shown = opts_.all_ranks || opts_.ranks[i] == 0 || s == StreamKind::Err || looks_like_problem(text);
  if (shown) {
    console_line(s == StreamKind::Err ? stderr : stdout, prefix(i) + text);
  } else {
    w.hidden.push_back(text);
    if (w.hidden.size() > kTailLines) w.hidden.pop_front();
  }
}

void OutputRelay::show_hidden_tail(int i) {
  Worker& w = workers_[i];
  for (StreamKind s : {StreamKind::Out, StreamKind::Err}) {
    std::string& partial = w.partial[int(s)];
    if (partial.empty() || raw(i, s)) continue;
    line(i, s, partial);
    partial.clear();
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
  if (i >= 0 && workers_[i].log) std::fprintf(workers_[i].log, "%s\n", text.c_str());
  flush();
}

// A line of its own while a bar is drawn: clear the bar's line, print, redraw the bar.
void OutputRelay::console_line(FILE* sink, const std::string& text) {
  if (line_open_) put(stdout, "\r\033[K");
  put(sink, text + "\n");
  if (line_open_) put(stdout, bar_);
}

// Rank 0's output ended mid-line: what follows starts on a line of its own.
void OutputRelay::end_open_line() {
  if (!line_open_) return;
  put(stdout, "\n");
  line_open_ = false;
  bar_.clear();
  flush();
}

// Console writes stay in stdio's buffers until flush(), once per chunk read; switching
// between stdout and stderr flushes the other first, so a shared terminal keeps the order.
void OutputRelay::put(FILE* sink, std::string_view text) {
  if (last_sink_ && last_sink_ != sink) std::fflush(last_sink_);
  last_sink_ = sink;
  std::fwrite(text.data(), 1, text.size(), sink);
}

void OutputRelay::flush() {
  std::fflush(stdout);
  std::fflush(stderr);
  for (auto& w : workers_)
    if (w.log) std::fflush(w.log);
}

}  // namespace ddl::launcher
