// LineCollapser, collapse_line and looks_like_problem (see terminal_text.h). A line is kept
// as cells, one UTF-8 code point each, so a redraw of "█" characters overwrites whole
// characters; escape sequences are parsed by a small state machine, byte by byte.
#include "apps/ddlrun/terminal_text.h"

#include <algorithm>
#include <cctype>

namespace ddl::launcher {

void LineCollapser::clear() {
  cells_.clear();
  col_ = 0;
  state_ = State::Ground;
  csi_.clear();
}

void LineCollapser::put(unsigned char c) {
  if (cells_.size() < col_) cells_.resize(col_, Cell{{' '}, 1});
  const Cell cell{{static_cast<char>(c)}, 1};
  if (col_ < cells_.size())
    cells_[col_] = cell;
  else
    cells_.push_back(cell);
  ++col_;
}

// CSI "K" with csi_ as its parameter; other final bytes (colours, cursor moves) do nothing.
void LineCollapser::erase_in_line() {
  if (csi_.empty() || csi_ == "0") {
    if (col_ < cells_.size()) cells_.resize(col_);
  } else if (csi_ == "1") {
    for (size_t k = 0; k < std::min(col_ + 1, cells_.size()); ++k) cells_[k] = Cell{{' '}, 1};
  } else if (csi_ == "2") {
    cells_.clear();
  }
}

void LineCollapser::feed(std::string_view raw) {
  for (const char byte : raw) {
    const unsigned char c = byte;
    switch (state_) {
      case State::Esc:  // CSI, OSC, or a two-byte escape whose second byte is dropped
        state_ = c == '[' ? State::Csi : c == ']' ? State::Osc : State::Ground;
        csi_.clear();
        continue;
      case State::Csi:  // parameters, then one final byte in 0x40..0x7e
        if (c >= 0x40 && c <= 0x7e) {
          if (c == 'K') erase_in_line();
          state_ = State::Ground;
        } else if (csi_.size() < 8) {
          csi_ += static_cast<char>(c);  // a longer one matches no "K" parameter anyway
        }
        continue;
      case State::Osc:  // e.g. a window title: up to BEL or ESC '\'
        if (c == '\a') state_ = State::Ground;
        if (c == 0x1b) state_ = State::OscEsc;
        continue;
      case State::OscEsc:
        state_ = c == '\\' ? State::Ground : c == 0x1b ? State::OscEsc : State::Osc;
        continue;
      case State::Ground:
        break;
    }
    if (c == '\r') {
      col_ = 0;
    } else if (c == '\b') {
      col_ -= col_ > 0;
    } else if (c == 0x1b) {
      state_ = State::Esc;
    } else if ((c & 0xc0) == 0x80 && col_ > 0 && col_ <= cells_.size()) {
      Cell& prev = cells_[col_ - 1];  // continues the code point just written (4 bytes at most)
      if (prev.n < 4) prev.bytes[prev.n++] = static_cast<char>(c);
    } else if ((c >= 0x20 && c != 0x7f) || c == '\t') {
      put(c);
    }
  }
}

std::string LineCollapser::text() const {
  std::string out;
  out.reserve(cells_.size());
  for (const Cell& cell : cells_) out.append(cell.bytes, cell.n);
  return out;
}

std::string collapse_line(std::string_view raw) {
  LineCollapser line;
  line.feed(raw);
  return line.text();
}

bool looks_like_problem(std::string_view line) {
  std::string lower(line);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* word : {"warn", "error", "fatal"})
    if (lower.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace ddl::launcher
