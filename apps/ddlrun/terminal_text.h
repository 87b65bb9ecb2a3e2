// What a terminal would show of one line of a worker's output, for ddlrun's log files and
// prefixed console lines: carriage-return redraws (progress bars) collapse to the line's
// last state and escape sequences are dropped. No cursor movement across lines, no widths.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ddl::launcher {

// One line fed in pieces as they arrive: memory grows with the line's width on screen (one
// 5-byte cell per character), not with how often it was redrawn; an escape sequence split
// between two pieces is understood.
class LineCollapser {
 public:
  void feed(std::string_view bytes);  // bytes of the line, never "\n"
  std::string text() const;           // the line as shown now
  size_t width() const { return cells_.size(); }
  void clear();

 private:
  struct Cell {
    char bytes[4];
    uint8_t n;
  };
  enum class State : uint8_t { Ground, Esc, Csi, Osc, OscEsc };
  void put(unsigned char c);
  void erase_in_line();

  std::vector<Cell> cells_;
  size_t col_ = 0;
  State state_ = State::Ground;
  std::string csi_;  // a CSI sequence's parameter bytes so far (at most a few kept)
};

// The final text of `raw` (one line, without its "\n") after "\r", "\b" and "ESC[K" took
// effect; other escape sequences (colours, OSC titles) and control characters (NUL
// included: the bytes after it are kept) removed.
std::string collapse_line(std::string_view raw);

// Whether a line of a hidden rank's stdout is shown anyway: it contains "warn", "error" or
// "fatal", in any case (so "Warning:", "RuntimeError", "FATAL" all count).
bool looks_like_problem(std::string_view line);

}  // namespace ddl::launcher
