// What a terminal would show of one line of a worker's output, for ddlrun's log files and
// prefixed console lines: carriage-return redraws (progress bars) collapse to the line's
// last state and escape sequences are dropped. No cursor movement across lines, no widths.
#pragma once

#include <string>
#include <string_view>

namespace ddl::launcher {

// The final text of `raw` (one line, without its "\n") after "\r", "\b" and "ESC[K" took
// effect; other escape sequences (colours, OSC titles) and control characters removed.
std::string collapse_line(std::string_view raw);

// Whether a line of a hidden rank's stdout is shown anyway: it contains "warn", "error" or
// "fatal", in any case (so "Warning:", "RuntimeError", "FATAL" all count).
bool looks_like_problem(std::string_view line);

}  // namespace ddl::launcher
