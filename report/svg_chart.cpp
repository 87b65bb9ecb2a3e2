// SVG drawing for the report's charts: a fixed 760x360 canvas, the plot area on the left,
// the legend on the right, ticks at round values. Hover values come from SVG <title>
// elements (the browser's own tooltip), so nothing needs JavaScript.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include <ddl/report/svg_chart.h>

namespace ddl::report {
namespace {

constexpr double kWidth = 760, kHeight = 360;
constexpr double kLeft = 70, kRight = 180, kTop = 16, kBottom = 56;  // margins around the plot
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;
// Colour-blind-safe palette (Okabe and Ito, "Color Universal Design", 2008).
const char* const kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"};

const char* colour(size_t i) { return kPalette[i % (sizeof kPalette / sizeof kPalette[0])]; }

std::string num(double v) {  // coordinates: two decimals are enough on screen
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// A flat range, or one so narrow for its magnitude that steps within it would be lost to
// rounding (hi and lo an ulp apart) or be subnormal, is widened by half its value either
// side (a constant lr), or to [-0.5, 0.5] around 0.
void widen_if_flat(double& lo, double& hi) {
  const double mid = 0.5 * (lo + hi), mag = std::max(std::fabs(lo), std::fabs(hi));
  if (hi - lo > std::max(1e-9 * mag, 1e-300)) return;
  const double pad = mid != 0 ? 0.5 * std::fabs(mid) : 0.5;
  lo = mid - pad, hi = mid + pad;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  void fix() {  // empty or flat ranges get a width, so ticks and scales are defined
    if (!(lo <= hi)) lo = 0, hi = 1;
    widen_if_flat(lo, hi);
  }
};

// Tick positions for a log10 x axis over [lo, hi] (in log10 units): whole powers of ten;
// when fewer than two fall inside, 1-2-5 steps; when still fewer, the data's own x values.
std::vector<double> log_ticks(double lo, double hi, const std::vector<double>& data) {
  std::vector<double> ticks;
  for (double d = std::ceil(lo); d <= hi && ticks.size() < 20; d += 1) ticks.push_back(d);
  if (ticks.size() >= 2) return ticks;
  ticks.clear();
  for (double d = std::floor(lo); d <= std::ceil(hi) && ticks.size() < 20; d += 1)
    for (double m : {1.0, 2.0, 5.0})
      if (const double t = d + std::log10(m); t >= lo && t <= hi) ticks.push_back(t);
  if (ticks.size() >= 2) return ticks;
  ticks = data;
  std::sort(ticks.begin(), ticks.end());
  ticks.erase(std::unique(ticks.begin(), ticks.end()), ticks.end());
  if (ticks.size() > 10) ticks.resize(10);
  return ticks;
}

std::string open_figure(const std::string& id, const std::string& kind, const std::string& title) {
  return "<figure class=\"chart\" data-chart=\"" + html_escape(id) + "\" data-kind=\"" + kind + "\">\n<figcaption>" +
         html_escape(title) + "</figcaption>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) +
         "\" height=\"" + num(kHeight) + "\" viewBox=\"0 0 " + num(kWidth) + " " + num(kHeight) + "\" role=\"img\">\n";
}

std::string text(double x, double y, const std::string& s, const char* anchor = "middle", const char* extra = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\"" + extra + ">" +
         html_escape(s) + "</text>\n";
}

// The y axis with ticks over [lo, hi] (mapped to the plot's height) and its label; the x
// axis line and label. Returns the y range the ticks span (it contains [lo, hi]).
std::string axes(Range& y, const std::string& x_label, const std::string& y_label) {
  const std::vector<double> ticks = nice_ticks(y.lo, y.hi);
  y.lo = std::min(y.lo, ticks.front()), y.hi = std::max(y.hi, ticks.back());
  std::string s = "<g class=\"axis y\">\n";
  for (double t : ticks) {
    const double py = kTop + kPlotH * (1 - (t - y.lo) / (y.hi - y.lo));
    s += "<line x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft + kPlotW) + "\" y1=\"" + num(py) + "\" y2=\"" + num(py) +
         "\" class=\"grid\"/>\n" + text(kLeft - 6, py + 4, format_number(t), "end");
  }
  s += text(16, kTop + kPlotH / 2, y_label, "middle",
            (" transform=\"rotate(-90 16 " + num(kTop + kPlotH / 2) + ")\"").c_str());
  s += "</g>\n<g class=\"axis x\">\n<line x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft + kPlotW) + "\" y1=\"" +
       num(kTop + kPlotH) + "\" y2=\"" + num(kTop + kPlotH) + "\" class=\"baseline\"/>\n";
  return s + text(kLeft + kPlotW / 2, kHeight - 8, x_label) + "</g>\n";
}

std::string legend(const std::vector<std::string>& names) {
  std::string s = "<g class=\"legend\">\n";
  for (size_t i = 0; i < names.size(); ++i) {
    const double y = kTop + 8 + 20 * static_cast<double>(i);
    s += "<rect x=\"" + num(kWidth - kRight + 16) + "\" y=\"" + num(y - 9) + "\" width=\"12\" height=\"12\" fill=\"" +
         colour(i) + "\"/>\n" + text(kWidth - kRight + 34, y + 1, names[i], "start");
  }
  return s + "</g>\n";
}

std::vector<std::string> names_of(const std::vector<Series>& series) {
  std::vector<std::string> names;
  for (const auto& s : series) names.push_back(s.name);
  return names;
}

std::string close_figure() { return "</svg>\n</figure>\n"; }

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  return out;
}

std::string format_number(double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", std::fabs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

std::vector<double> nice_ticks(double lo, double hi, int n) {
  if (!(hi >= lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  if (hi == lo) return {lo};
  widen_if_flat(lo, hi);  // else the step could be below an ulp and never move t
  const double raw = (hi - lo) / std::max(n, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  // By index, not t += step: no rounding drift, and a hard cap on the count.
  const double first = std::floor(lo / step) * step;
  std::vector<double> ticks;
  for (int i = 0; i < 4 * std::max(n, 1) + 4; ++i) {
    const double t = first + i * step;
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
    if (t >= hi) break;
  }
  return ticks;
}

std::string svg_line_chart(const LineChart& c) {
  // On a log scale the chart works in log10(x); ticks are labelled with x itself.
  const auto pos = [&](double v) { return c.log_x ? (v > 0 ? std::log10(v) : NAN) : v; };
  Range x, y;
  for (const auto& s : c.series)
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
      if (std::isfinite(pos(s.x[i])) && std::isfinite(s.y[i])) x.add(pos(s.x[i])), y.add(s.y[i]);
  x.fix(), y.fix();
  std::string out = open_figure(c.id, "line", c.title) + axes(y, c.x_label, c.y_label);
  const auto px = [&](double v) { return kLeft + kPlotW * (v - x.lo) / (x.hi - x.lo); };
  const auto py = [&](double v) { return kTop + kPlotH * (1 - (v - y.lo) / (y.hi - y.lo)); };
  out += "<g class=\"axis x\">\n";
  std::vector<double> xs;  // the data's x positions, for log_ticks' last resort
  if (c.log_x)
    for (const auto& s : c.series)
      for (double v : s.x)
        if (std::isfinite(pos(v))) xs.push_back(pos(v));
  const std::vector<double> xticks = c.log_x ? log_ticks(x.lo, x.hi, xs) : nice_ticks(x.lo, x.hi);
  for (double t : xticks)
    if (t >= x.lo && t <= x.hi) out += text(px(t), kTop + kPlotH + 16, format_number(c.log_x ? std::pow(10, t) : t));
  out += "</g>\n";
  for (size_t k = 0; k < c.series.size(); ++k) {
    const Series& s = c.series[k];
    std::string points, dots;
    size_t count = 0;
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!std::isfinite(pos(s.x[i])) || !std::isfinite(s.y[i])) continue;
      points += (count++ ? " " : "") + num(px(pos(s.x[i]))) + "," + num(py(s.y[i]));
      // Markers only where they stay readable; the polyline lists every point anyway.
      dots += "<circle class=\"marker\" cx=\"" + num(px(pos(s.x[i]))) + "\" cy=\"" + num(py(s.y[i])) +
              "\" r=\"3\" fill=\"" + colour(k) + "\"><title>" + html_escape(s.name) + ": " + format_number(s.x[i]) +
              ", " + format_number(s.y[i]) + "</title></circle>\n";
    }
    out += "<g class=\"series\" data-series=\"" + html_escape(s.name) +
           "\">\n<polyline class=\"line\" fill=\"none\" stroke=\"" + colour(k) + "\" stroke-width=\"1.5\" points=\"" +
           points + "\"/>\n" + (count <= 60 ? dots : "") + "</g>\n";
  }
  return out + legend(names_of(c.series)) + close_figure();
}

std::string svg_bar_chart(const BarChart& c) {
  const size_t n = c.categories.size();
  Range y;
  y.add(0);
  for (size_t i = 0; i < n; ++i) {
    double stack = 0;
    for (const auto& s : c.series) {
      const double v = i < s.y.size() && std::isfinite(s.y[i]) ? s.y[i] : 0;
      if (c.stacked)
        y.add(stack += v);
      else
        y.add(v);
    }
  }
  y.fix();
  std::string out =
      open_figure(c.id, c.stacked ? "stacked-bars" : "grouped-bars", c.title) + axes(y, c.x_label, c.y_label);
  const auto py = [&](double v) { return kTop + kPlotH * (1 - (v - y.lo) / (y.hi - y.lo)); };
  const double slot = kPlotW / static_cast<double>(std::max<size_t>(n, 1));
  const double group = std::min(slot * 0.7, 160.0);  // one rank's bar stays bar-shaped
  const double bar = group / (c.stacked ? 1.0 : static_cast<double>(std::max<size_t>(c.series.size(), 1)));
  out += "<g class=\"axis x\">\n";
  for (size_t i = 0; i < n; ++i) out += text(kLeft + slot * (i + 0.5), kTop + kPlotH + 16, c.categories[i]);
  out += "</g>\n";
  std::vector<double> base(n, 0.0);
  for (size_t k = 0; k < c.series.size(); ++k) {
    const Series& s = c.series[k];
    out += "<g class=\"series\" data-series=\"" + html_escape(s.name) + "\" fill=\"" + colour(k) + "\">\n";
    for (size_t i = 0; i < n && i < s.y.size(); ++i) {
      const double v = std::isfinite(s.y[i]) ? s.y[i] : 0;
      const double x0 = kLeft + slot * (i + 0.5) - group / 2 + (c.stacked ? 0 : bar * static_cast<double>(k));
      const double top = py(base[i] + v), bottom = py(base[i]);
      out += "<rect class=\"bar\" data-category=\"" + html_escape(c.categories[i]) + "\" data-value=\"" +
             format_number(s.y[i]) + "\" x=\"" + num(x0) + "\" y=\"" + num(std::min(top, bottom)) + "\" width=\"" +
             num(bar) + "\" height=\"" + num(std::fabs(bottom - top)) + "\"><title>" + html_escape(c.categories[i]) +
             ", " + html_escape(s.name) + ": " + format_number(s.y[i]) + "</title></rect>\n";
      if (c.stacked) base[i] += v;
    }
    out += "</g>\n";
  }
  return out + legend(names_of(c.series)) + close_figure();
}

std::string svg_heat_map(const HeatMap& h) {
  const size_t nr = h.rows.size(), nc = h.cols.size();
  int64_t most = 1;
  for (const auto& row : h.counts)
    for (int64_t v : row) most = std::max(most, v);
  std::string out = open_figure(h.id, "heatmap", h.title);
  const double left = 130, top = 16, w = kWidth - left - 40, ht = kHeight - top - 80;
  const double cw = w / static_cast<double>(std::max<size_t>(nc, 1)),
               ch = ht / static_cast<double>(std::max<size_t>(nr, 1));
  out += "<g class=\"series\" data-series=\"counts\">\n";
  for (size_t r = 0; r < nr; ++r)
    for (size_t c = 0; c < nc; ++c) {
      const int64_t v = r < h.counts.size() && c < h.counts[r].size() ? h.counts[r][c] : 0;
      const double shade = static_cast<double>(v) / static_cast<double>(most);  // 0 white .. 1 dark blue
      char fill[16];
      std::snprintf(fill, sizeof fill, "#%02x%02x%02x", int(255 - 255 * shade), int(255 - 141 * shade),
                    int(255 - 77 * shade));
      const double x = left + cw * c, y = top + ch * r;
      out += "<rect class=\"cell\" data-row=\"" + std::to_string(r) + "\" data-col=\"" + std::to_string(c) +
             "\" data-value=\"" + std::to_string(v) + "\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" +
             num(cw) + "\" height=\"" + num(ch) + "\" fill=\"" + fill + "\" stroke=\"#fff\"><title>" +
             html_escape(h.rows[r]) + " as " + html_escape(h.cols[c]) + ": " + std::to_string(v) + "</title></rect>\n" +
             text(x + cw / 2, y + ch / 2 + 4, std::to_string(v), "middle", shade > 0.5 ? " fill=\"#fff\"" : "");
    }
  out += "</g>\n<g class=\"axis\">\n";
  for (size_t r = 0; r < nr; ++r) out += text(left - 6, top + ch * (r + 0.5) + 4, h.rows[r], "end");
  for (size_t c = 0; c < nc; ++c) {
    const double x = left + cw * (c + 0.5), y = top + ht + 12;
    out += text(x, y, h.cols[c], "end", (" transform=\"rotate(-30 " + num(x) + " " + num(y) + ")\"").c_str());
  }
  out += text(left + w / 2, kHeight - 6, h.col_label) +
         text(14, top + ht / 2, h.row_label, "middle",
              (" transform=\"rotate(-90 14 " + num(top + ht / 2) + ")\"").c_str());
  return out + "</g>\n" + close_figure();
}

}  // namespace ddl::report
