// HtmlReport: appends escaped HTML fragments; the page's style sheet is inline.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <ddl/base/error.h>
#include <ddl/report/html_report.h>
#include <ddl/trace/atomic_file.h>

namespace ddl::report {
namespace {

const char* const kStyle = R"(
body { font-family: sans-serif; margin: 2em auto; max-width: 1000px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
figure.chart { margin: 1em 0; } figcaption { font-weight: bold; margin-bottom: 0.3em; }
svg text { font-size: 11px; fill: #333; } svg .grid { stroke: #e4e4e4; } svg .baseline { stroke: #888; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; } caption { font-weight: bold; text-align: left; }
pre { font-size: 0.85em; background: #f7f7f7; padding: 0.5em; overflow-x: auto; }
)";

// Records uncaught errors and console.error calls on the root element, so a headless
// browser's --dump-dom shows them (its log does not say a message's level).
const char* const kErrorHook = R"(<script>
(function () {
  var root = document.documentElement, n = 0;
  function mark(m) { root.setAttribute('data-errors', ++n); root.setAttribute('data-last-error', String(m)); }
  window.addEventListener('error', function (e) { mark(e.message || 'failed to load ' + (e.target && e.target.src)); }, true);
  var original = console.error;
  console.error = function () { mark(Array.prototype.join.call(arguments, ' ')); original.apply(console, arguments); };
})();
</script>
)";

}  // namespace

HtmlReport::HtmlReport(std::string title) : title_(std::move(title)) {}

void HtmlReport::section(const std::string& heading) { body_ += "<h2>" + html_escape(heading) + "</h2>\n"; }

void HtmlReport::paragraph(const std::string& text) { body_ += "<p>" + html_escape(text) + "</p>\n"; }

void HtmlReport::key_values(const std::string& id, const std::string& title,
                            const std::vector<std::pair<std::string, std::string>>& kv) {
  HtmlTable t{id, title, {}, {}};
  for (const auto& [k, v] : kv) t.rows.push_back({k, v});
  add(t);
}

void HtmlReport::add(const HtmlTable& t) {
  body_ += "<table class=\"data\" data-table=\"" + html_escape(t.id) + "\">\n<caption>" + html_escape(t.title) +
           "</caption>\n";
  if (!t.header.empty()) {
    body_ += "<tr>";
    for (const auto& h : t.header) body_ += "<th>" + html_escape(h) + "</th>";
    body_ += "</tr>\n";
  }
  for (const auto& row : t.rows) {
    body_ += "<tr>";
    for (const auto& cell : row) body_ += "<td>" + html_escape(cell) + "</td>";
    body_ += "</tr>\n";
  }
  body_ += "</table>\n";
}

void HtmlReport::preformatted(const std::string& id, const std::string& title, const std::string& text) {
  body_ += "<figure class=\"text\"><figcaption>" + html_escape(title) + "</figcaption>\n<pre data-table=\"" +
           html_escape(id) + "\">" + html_escape(text) + "</pre></figure>\n";
}

void HtmlReport::add(const LineChart& c) { body_ += svg_line_chart(c); }
void HtmlReport::add(const BarChart& c) { body_ += svg_bar_chart(c); }
void HtmlReport::add(const HeatMap& h) { body_ += svg_heat_map(h); }

std::string HtmlReport::html() const {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + html_escape(title_) +
         "</title>\n" + kErrorHook + "<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>" + html_escape(title_) +
         "</h1>\n" + body_ + "</body>\n</html>\n";
}

void HtmlReport::write(const std::string& path) const {
  std::error_code ec;
  DDL_CHECK(!std::filesystem::is_directory(path, ec), "HtmlReport: '", path, "' is a directory, not a file name");
  files::write_atomically(path, html(), "HtmlReport");  // never half a report, never through a planted link
}

void HtmlReport::check_writable(const std::string& path) {
  std::error_code ec;
  DDL_CHECK(!std::filesystem::is_directory(path, ec), "HtmlReport: '", path, "' is a directory, not a file name");
  files::check_writable(path, "HtmlReport");
}

}  // namespace ddl::report
