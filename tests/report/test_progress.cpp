// ProgressBar: the line's text (bar, counts, percent, elapsed<ETA, status), nothing at
// all when disabled except println's lines, and clean redraws when enabled.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include <ddl/report/progress.h>

using namespace ddl::report;

TEST_CASE("format_progress: bar, counts, elapsed and ETA", "[apps]") {
  CHECK(format_progress("epoch 1", 25, 100, 10.0, "loss 0.53", 20) ==
        "epoch 1 [#####...............] 25/100  25% 0:10<0:30 loss 0.53");
  CHECK(format_progress("", 0, 10, 0.0, "", 4) == "[....] 0/10   0% 0:00<?");
  CHECK(format_progress("", 10, 10, 3725.0, "", 4) == "[####] 10/10 100% 1:02:05<0:00");
  CHECK(format_duration(59.6) == "1:00");
  // Resumed at item 80: 10 more items in 5 s leave 10 items, 5 s (not 80 + 10 in 5 s).
  CHECK(format_progress("", 90, 100, 5.0, "", 4, /*start=*/80) == "[###.] 90/100  90% 0:05<0:05");
  CHECK(format_progress("", 80, 100, 0.0, "", 4, /*start=*/80) == "[###.] 80/100  80% 0:00<?");
}

TEST_CASE("ProgressBar::start_at: the skipped items fill the bar, not the rate", "[report]") {
  std::ostringstream os;
  ProgressBar bar(100, "e", /*enabled=*/1, os);
  bar.start_at(80);
  bar.update(100);  // the last item always draws; at once, so elapsed 0:00
  CHECK_THAT(os.str(), Catch::Contains("100/100 100% 0:00<0:00"));
  std::ostringstream os2;
  ProgressBar fresh(100, "e", 1, os2);
  fresh.start_at(50);
  fresh.println("x");  // draws the bar at 50, ETA unknown yet
  CHECK_THAT(os2.str(), Catch::Contains("50/100  50% 0:00<?"));
}

TEST_CASE("ProgressBar: silent when disabled, println still prints", "[apps]") {
  std::ostringstream os;
  {
    ProgressBar bar(10, "train", /*enabled=*/0, os);
    for (int i = 1; i <= 10; ++i) bar.update(i, "loss 1.0");
    bar.println("Batch Idx: 5, Batch Loss: 1.000");
  }
  CHECK(os.str() == "Batch Idx: 5, Batch Loss: 1.000\n");
}

TEST_CASE("ProgressBar: enabled, redraws in place and ends the line", "[apps]") {
  std::ostringstream os;
  ProgressBar bar(4, "eval", /*enabled=*/1, os);
  bar.update(1);
  bar.println("log line");
  bar.update(4);  // the last item always draws
  bar.finish();
  bar.finish();  // idempotent
  std::string s = os.str();
  CHECK_THAT(s, Catch::Contains("\reval [#######"));
  CHECK_THAT(s, Catch::Contains("\r\033[Klog line\n"));
  CHECK_THAT(s, Catch::Contains("4/4 100%"));
  CHECK(s.back() == '\n');
  CHECK(s.find("4/4 100%") != std::string::npos);
}

TEST_CASE("format_train_status: loss, images/s and the slowest rank's step time", "[report]") {
  CHECK(format_train_status(0.53214, 1234.4, 0.1234) == "loss 0.5321, 1234 img/s, slowest rank 0.123 s/step");
  // One rank, or before the first exchange: the slowest rank is left out, as is any n/a value.
  CHECK(format_train_status(0.5, 99.6, NAN) == "loss 0.5000, 100 img/s");
  CHECK(format_train_status(NAN, NAN, 2.0) == "slowest rank 2.000 s/step");
  CHECK(format_progress("epoch 2", 5, 10, 5.0, format_train_status(1.0, 50, 0.5), 10) ==
        "epoch 2 [#####.....] 5/10  50% 0:05<0:05 loss 1.0000, 50 img/s, slowest rank 0.500 s/step");
}

TEST_CASE("progress_wanted: DDL_PROGRESS from ddlrun decides, else the terminal", "[report]") {
  CHECK(progress_wanted("1", false));
  CHECK_FALSE(progress_wanted("0", true));
  CHECK(progress_wanted(nullptr, true));
  CHECK_FALSE(progress_wanted(nullptr, false));
  CHECK(progress_wanted("", true));  // anything else: the terminal decides
}

TEST_CASE("ProgressBar(enabled=-1) follows DDL_PROGRESS", "[report]") {
  setenv("DDL_PROGRESS", "1", 1);
  std::ostringstream on;
  ProgressBar drawn(2, "e", -1, on);
  drawn.update(2);
  CHECK_THAT(on.str(), Catch::Contains("\re [####"));
  setenv("DDL_PROGRESS", "0", 1);
  std::ostringstream off;
  {
    ProgressBar silent(2, "e", -1, off);
    silent.update(2);
  }
  CHECK(off.str().empty());
  unsetenv("DDL_PROGRESS");
}
