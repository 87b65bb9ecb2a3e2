// Charts as inline SVG for the HTML report: line charts, stacked and grouped bars, and a
// heat map. No scripts, fonts or network: each chart is one <figure class="chart"> whose
// series are <g class="series" data-series="NAME"> and whose points are real SVG elements
// (a line's points in its polyline's `points`, a bar's <rect class="bar">, a cell's
// <rect class="cell">), so a test counts what is drawn. It draws what it is given; it
// computes no statistics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddl::report {

struct Series {
  std::string name;
  std::vector<double> x, y;  // line charts: x and y of equal length; bars: y per category
};

struct LineChart {
  std::string id, title;         // id: data-chart, a short name ("loss"); title: the caption
  std::string x_label, y_label;  // with units: "step", "time (ms)", "accuracy (%)"
  std::vector<Series> series;    // points whose x or y is not finite are left out
  bool log_x = false;            // x on a log10 scale (link rates); points with x <= 0 are left out
                                 // (ticks at powers of ten, else at 1-2-5 steps, else at the data's x)
};

struct BarChart {
  std::string id, title, x_label, y_label;
  std::vector<std::string> categories;  // one bar (stacked) or one group (grouped) each
  std::vector<Series> series;           // y[i]: the value at categories[i]
  bool stacked = true;
};

struct HeatMap {
  std::string id, title, row_label, col_label;  // e.g. "true class", "predicted class"
  std::vector<std::string> rows, cols;
  std::vector<std::vector<int64_t>> counts;  // counts[r][c]
};

// HTML text escaping (&, <, >, ", ').
std::string html_escape(const std::string& s);
// "1.5", "20", "1e+06": a number as an axis tick or a value shows it (%.4g).
std::string format_number(double v);
// Ticks for [lo, hi]: about `n` round values (1, 2 or 5 times a power of ten), at most
// 4n + 4 of them. A range narrow for its magnitude is first widened as a flat one is.
std::vector<double> nice_ticks(double lo, double hi, int n = 5);

// Each returns a <figure class="chart" data-chart=ID data-kind=...> element.
std::string svg_line_chart(const LineChart& c);
std::string svg_bar_chart(const BarChart& c);  // data-kind "stacked-bars" or "grouped-bars"
std::string svg_heat_map(const HeatMap& h);    // data-kind "heatmap"

}  // namespace ddl::report
