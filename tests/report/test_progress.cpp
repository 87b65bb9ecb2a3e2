// ProgressBar: the line's text (bar, counts, percent, elapsed<ETA, status), nothing at
// all when disabled except println's lines, and clean redraws when enabled.
#include <catch2/catch.hpp>
#include <sstream>

#include "report/progress.h"

using namespace ddl::report;

TEST_CASE("format_progress: bar, counts, elapsed and ETA", "[apps]") {
  CHECK(format_progress("epoch 1", 25, 100, 10.0, "loss 0.53", 20) ==
        "epoch 1 [#####...............] 25/100  25% 0:10<0:30 loss 0.53");
  CHECK(format_progress("", 0, 10, 0.0, "", 4) == "[....] 0/10   0% 0:00<?");
  CHECK(format_progress("", 10, 10, 3725.0, "", 4) == "[####] 10/10 100% 1:02:05<0:00");
  CHECK(format_duration(59.6) == "1:00");
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
