// ddlrun's collapse_line (a line as a terminal would end up showing it: the text written to
// --log-dir files and prefixed console lines) and looks_like_problem (which hidden ranks'
// stdout lines are shown anyway). See apps/ddlrun/terminal_text.h.
#include <catch2/catch.hpp>

#include "apps/ddlrun/terminal_text.h"

using ddl::launcher::collapse_line;
using ddl::launcher::LineCollapser;
using ddl::launcher::looks_like_problem;

TEST_CASE("collapse_line: plain text is kept as it is", "[ddlrun]") {
  CHECK(collapse_line("epoch 1 loss 0.25\ttime 3 s") == "epoch 1 loss 0.25\ttime 3 s");
  CHECK(collapse_line("") == "");
}

TEST_CASE("collapse_line: carriage-return redraws leave the last state", "[ddlrun]") {
  CHECK(collapse_line("10%\r50%\r100%") == "100%");
  // A shorter redraw without clearing leaves the old tail, as a terminal does...
  CHECK(collapse_line("step 10/10 eta 3s\rdone") == "done 10/10 eta 3s");
  // ...and ESC[K (erase to the end of the line) clears it.
  CHECK(collapse_line("step 10/10 eta 3s\r\x1b[Kdone") == "done");
  CHECK(collapse_line("abc\x1b[2Kx") == "   x");
  CHECK(collapse_line("abcdef\b\b\x1b[0K!") == "abcd!");
  CHECK(collapse_line("progress\r") == "progress");
}

TEST_CASE("collapse_line: escape sequences and control characters are dropped", "[ddlrun]") {
  CHECK(collapse_line("\x1b[1;31mred\x1b[0m text") == "red text");
  CHECK(collapse_line("\x1b]0;window title\x07shown") == "shown");
  CHECK(collapse_line("\x1b]0;title\x1b\\shown") == "shown");
  CHECK(collapse_line("a\x07"
                      "b\x01"
                      "c") == "abc");
}

TEST_CASE("collapse_line: a redraw overwrites whole UTF-8 characters", "[ddlrun]") {
  // "██··" then "\r" and "███": each cell holds one code point, whatever its byte count.
  CHECK(collapse_line("\xe2\x96\x88\xe2\x96\x88\xc2\xb7\xc2\xb7\r\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88") ==
        "\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xc2\xb7");
}

TEST_CASE("looks_like_problem: warnings, errors and fatal lines in any case", "[ddlrun]") {
  for (const char* line : {"Warning: lr is high", "WARN slow rank", "RuntimeError: boom", "some error here",
                           "FATAL: out of memory", "UserWarning: x"})
    CHECK(looks_like_problem(line));
  for (const char* line : {"epoch 1 loss 0.25", "rank 1 ready", "terror"})  // "terror" holds "error"
    CHECK(looks_like_problem(line) == (std::string(line) == "terror"));
}

TEST_CASE("collapse_line: a NUL byte is dropped and the bytes after it are kept", "[ddlrun]") {
  // ddlrun once cut relayed lines at the first NUL (a C string).
  CHECK(collapse_line(std::string_view("a\0b", 3)) == "ab");
  CHECK(collapse_line(std::string_view("\0\0x\0", 4)) == "x");
}

TEST_CASE("LineCollapser: a line fed in pieces reads as the whole line", "[ddlrun]") {
  const std::string raw = "\x1b]0;title\x1b\\step 1\r\x1b[1;32mstep 22\x1b[0m\b\b\x1b[K!\xe2\x96\x88";
  const std::string whole = collapse_line(raw);
  CHECK(whole == "step !\xe2\x96\x88");
  for (size_t cut = 0; cut <= raw.size(); ++cut) {  // every split, escapes and code points included
    LineCollapser line;
    line.feed(std::string_view(raw).substr(0, cut));
    line.feed(std::string_view(raw).substr(cut));
    INFO("split at byte " << cut);
    CHECK(line.text() == whole);
  }
}

TEST_CASE("LineCollapser: memory follows the line's width, not its redraws", "[ddlrun]") {
  LineCollapser line;
  for (int i = 0; i < 100000; ++i) line.feed("\rstep " + std::to_string(i) + "/100000 loss 0.25");
  CHECK(line.width() == std::string("step 99999/100000 loss 0.25").size());
  CHECK(line.text() == "step 99999/100000 loss 0.25");
  // Stray continuation bytes stay in the one cell they continue (4 bytes at most).
  line.clear();
  line.feed("a" + std::string(1000, '\x80'));
  CHECK(line.width() == 1);
  CHECK(line.text().size() == 4);
}
