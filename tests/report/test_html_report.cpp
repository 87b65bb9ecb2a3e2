// svg_chart and HtmlReport: what is drawn can be counted (points in a polyline, one rect
// per bar segment and per heat-map cell), text is escaped, ticks are round and cover the
// data, and the document is self-contained. The browser test renders full reports.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include <ddl/base/error.h>
#include <ddl/report/html_report.h>

using namespace ddl::report;

namespace {
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("nice_ticks: round steps that cover the range", "[report]") {
  CHECK(nice_ticks(0, 10) == std::vector<double>{0, 2, 4, 6, 8, 10});
  const auto t = nice_ticks(0.37, 2.31);
  CHECK(t.front() <= 0.37);
  CHECK(t.back() >= 2.31);
  CHECK(t == std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5});
  // Ends an ulp apart: the step would be below half an ulp and never move (it hung).
  for (double v : {1.0, 1e-300, -7.5e12, 0.0}) {
    const double next = std::nextafter(v, 1e308);
    const auto tiny = nice_ticks(v, next);
    INFO(v);
    REQUIRE(tiny.size() >= 2);
    CHECK(tiny.size() <= 24);
    CHECK(tiny.front() <= v);
    CHECK(tiny.back() >= next);
  }
  CHECK(nice_ticks(0, 1e9, 5).size() <= 24);
  CHECK(format_number(1234567) == "1.235e+06");
  CHECK(format_number(NAN) == "n/a");
}

TEST_CASE("line chart: one series group each, every finite point in the polyline", "[report]") {
  LineChart c{"loss", "Loss <train>", "step", "loss", {}};
  c.series.push_back({"train", {0, 1, 2, 3}, {2.0, 1.5, NAN, 0.5}});
  c.series.push_back({"test \"eval\"", {3}, {0.7}});
  const std::string svg = svg_line_chart(c);
  CHECK_THAT(svg, Catch::Contains("<figure class=\"chart\" data-chart=\"loss\" data-kind=\"line\">"));
  CHECK_THAT(svg, Catch::Contains("<figcaption>Loss &lt;train&gt;</figcaption>"));
  CHECK_THAT(svg, Catch::Contains("data-series=\"test &quot;eval&quot;\""));
  CHECK(count(svg, "class=\"series\"") == 2);
  std::smatch m;
  std::string rest = svg;
  std::vector<size_t> points;
  while (std::regex_search(rest, m, std::regex("points=\"([^\"]*)\""))) {
    points.push_back(count(m[1].str(), ",") + 0);
    rest = m.suffix();
  }
  CHECK(points == std::vector<size_t>{3, 1});  // the NaN point is left out
}

namespace {
std::vector<std::string> x_labels(const std::string& svg) {  // the x axis group's <text>s
  std::vector<std::string> out;
  const size_t axis = svg.find("<g class=\"axis x\">", svg.find("<g class=\"axis x\">") + 1);
  const std::string g = svg.substr(axis, svg.find("</g>", axis) - axis);
  std::smatch m;
  for (auto it = g.cbegin(); std::regex_search(it, g.cend(), m, std::regex(">([^<]*)</text>")); it = m.suffix().first)
    out.push_back(m[1].str());
  return out;
}
}  // namespace

TEST_CASE("line chart: a y range an ulp wide draws (it hung) and is not NaN", "[report]") {
  LineChart c{"lr", "lr", "step", "lr", {}};
  c.series.push_back({"lr", {0, 1}, {0.1, std::nextafter(0.1, 1.0)}});
  const std::string svg = svg_line_chart(c);
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(count(svg, "class=\"grid\"") >= 2);
}

TEST_CASE("log-scale x: labels at powers of ten, else 1-2-5 steps, else the data's x", "[report]") {
  LineChart c{"sweep", "sweep", "rate", "ms", {}, true};
  c.series.push_back({"ddp", {10, 100, 1000}, {3, 2, 1}});
  CHECK(x_labels(svg_line_chart(c)) == std::vector<std::string>{"10", "100", "1000"});
  c.series[0].x = {20, 50};  // no power of ten inside [20, 50]
  CHECK(x_labels(svg_line_chart(c)) == std::vector<std::string>{"20", "50"});
  c.series[0].x = {30, 40};  // no 1-2-5 step either
  CHECK(x_labels(svg_line_chart(c)) == std::vector<std::string>{"30", "40"});
}

TEST_CASE("stacked bars: one rect per category and series, stacked in order", "[report]") {
  BarChart c{"steps", "Step time", "rank", "time (ms)", {"0", "1"}, {}, true};
  for (const char* phase : {"data", "forward", "backward", "comm wait", "optimizer"})
    c.series.push_back({phase, {}, {1.0, 2.0}});
  const std::string svg = svg_bar_chart(c);
  CHECK_THAT(svg, Catch::Contains("data-kind=\"stacked-bars\""));
  CHECK(count(svg, "class=\"bar\"") == 10);
  CHECK(count(svg, "data-category=\"1\" data-value=\"2\"") == 5);
  c.stacked = false;
  CHECK_THAT(svg_bar_chart(c), Catch::Contains("data-kind=\"grouped-bars\""));
}

TEST_CASE("heat map: a cell per count with its value", "[report]") {
  HeatMap h{"confusion",
            "Confusion",
            "true",
            "predicted",
            {"a", "b", "c"},
            {"a", "b", "c"},
            {{5, 1, 0}, {0, 7, 2}, {1, 0, 9}}};
  const std::string svg = svg_heat_map(h);
  CHECK(count(svg, "class=\"cell\"") == 9);
  CHECK_THAT(svg, Catch::Contains("data-row=\"1\" data-col=\"2\" data-value=\"2\""));
}

TEST_CASE("HtmlReport: a self-contained document, written whole", "[report]") {
  HtmlReport r("run <1>");
  r.section("Settings");
  r.key_values("settings", "Settings", {{"model", "mlp & co"}});
  r.add(HtmlTable{"t", "T", {"a", "b"}, {{"1", "2"}}});
  const std::string html = r.html();
  CHECK_THAT(html, Catch::Contains("<title>run &lt;1&gt;</title>"));
  CHECK_THAT(html, Catch::Contains("<td>mlp &amp; co</td>"));
  CHECK(html.find("src=") == std::string::npos);  // nothing loaded from elsewhere
  CHECK(html.find("<link") == std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() / "ddl_test_html_report";
  std::filesystem::create_directories(dir);
  r.write((dir / "r.html").string());
  std::ifstream in(dir / "r.html");
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == html);
  CHECK_THROWS_AS(r.write((dir / "missing" / "r.html").string()), ddl::Error);
  // The rename fails (the target is a directory): the temporary file goes too.
  std::filesystem::create_directories(dir / "taken.html");
  CHECK_THROWS_AS(r.write((dir / "taken.html").string()), ddl::Error);
  // check_writable: a run checks its --report path before it trains, and leaves nothing.
  CHECK_NOTHROW(HtmlReport::check_writable((dir / "new.html").string()));
  CHECK_THROWS_AS(HtmlReport::check_writable((dir / "missing" / "r.html").string()), ddl::Error);
  CHECK_THROWS_AS(HtmlReport::check_writable((dir / "taken.html").string()), ddl::Error);
  std::vector<std::string> left;  // no temporary file of any write or check, whatever its name
  for (const auto& e : std::filesystem::directory_iterator(dir)) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"r.html", "taken.html"});
  std::filesystem::remove_all(dir);
}
