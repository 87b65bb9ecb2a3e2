// collapse_line and looks_like_problem (see terminal_text.h). A line is kept as cells, one
// UTF-8 code point each, so a redraw of "█" characters overwrites whole characters.
#include "apps/ddlrun/terminal_text.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace ddl::launcher {

std::string collapse_line(std::string_view raw) {
  std::vector<std::string> cells;
  size_t col = 0;
  auto put = [&](char c) {
    if (cells.size() < col) cells.resize(col, " ");
    if (col < cells.size())
      cells[col] = std::string(1, c);
    else
      cells.emplace_back(1, c);
    ++col;
  };
  for (size_t i = 0; i < raw.size(); ++i) {
    const unsigned char c = raw[i];
    if (c == '\r') {
      col = 0;
    } else if (c == '\b') {
      col -= col > 0;
    } else if (c == 0x1b && i + 1 < raw.size() && raw[i + 1] == '[') {
      // CSI: parameters, then one final byte in 0x40..0x7e. Only "erase in line" matters.
      size_t j = i + 2;
      while (j < raw.size() && (raw[j] < 0x40 || raw[j] > 0x7e)) ++j;
      if (j < raw.size() && raw[j] == 'K') {
        const std::string_view param = raw.substr(i + 2, j - i - 2);
        if (param.empty() || param == "0") {
          if (col < cells.size()) cells.resize(col);
        } else if (param == "1") {
          for (size_t k = 0; k < std::min(col + 1, cells.size()); ++k) cells[k] = " ";
        } else if (param == "2") {
          cells.clear();
        }
      }
      i = j;
    } else if (c == 0x1b && i + 1 < raw.size() && raw[i + 1] == ']') {
      // OSC (e.g. a window title): up to BEL or ESC '\'.
      size_t j = i + 2;
      while (j < raw.size() && raw[j] != '\a' && !(raw[j] == 0x1b && j + 1 < raw.size() && raw[j + 1] == '\\')) ++j;
      i = j < raw.size() && raw[j] == 0x1b ? j + 1 : j;
    } else if (c == 0x1b) {
      ++i;  // a two-byte escape
    } else if ((c & 0xc0) == 0x80 && col > 0 && col <= cells.size()) {
      cells[col - 1] += static_cast<char>(c);  // continues the code point just written
    } else if (c >= 0x20 || c == '\t') {
      if (c != 0x7f) put(static_cast<char>(c));
    }
  }
  std::string out;
  for (const auto& cell : cells) out += cell;
  return out;
}

bool looks_like_problem(std::string_view line) {
  std::string lower(line);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* word : {"warn", "error", "fatal"})
    if (lower.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace ddl::launcher
