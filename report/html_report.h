// HtmlReport: one self-contained HTML file (inline CSS and SVG; no network, no CDN, no
// web fonts) built from sections, paragraphs, tables and the charts of svg_chart.h, in
// the order added. It holds no data of its own: callers pass the numbers their text
// tables print. A tiny inline script only records script errors on <html data-errors>
// for headless tests; the page reads the same without JavaScript.
#pragma once

#include <string>
#include <vector>

#include <ddl/report/svg_chart.h>

namespace ddl::report {

struct HtmlTable {
  std::string id, title;  // id: data-table
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

class HtmlReport {
 public:
  explicit HtmlReport(std::string title);

  void section(const std::string& heading);
  void paragraph(const std::string& text);  // escaped
  // A two-column table of names and values (the run's settings, results).
  void key_values(const std::string& id, const std::string& title,
                  const std::vector<std::pair<std::string, std::string>>& kv);
  void add(const HtmlTable& t);
  // A text table exactly as the console prints it (<pre data-table=ID>).
  void preformatted(const std::string& id, const std::string& title, const std::string& text);
  void add(const LineChart& c);
  void add(const BarChart& c);
  void add(const HeatMap& h);

  // The whole document.
  std::string html() const;
  // Writes html() to `path` through a files::AtomicFile (never half a report, never through
  // a planted link); throws ddl::Error naming the path when it cannot.
  void write(const std::string& path) const;
  // Whether write(path) could create its files (files::check_writable). Call it
  // before a long run so that a bad path fails at once; throws ddl::Error naming it.
  static void check_writable(const std::string& path);

 private:
  std::string title_, body_;
};

}  // namespace ddl::report
