#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>

#include "report/format.h"

namespace kgate::report::svg {
namespace {

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2",
                                    "#edc948", "#e15759", "#9c755f"};

bool present(double v) { return std::isfinite(v) && v > 0; }

std::string n(double v) { return fmt::num(v, 1); }

std::string open_svg(double w, double h, const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + n(w) +
         "\" height=\"" + n(h) + "\" viewBox=\"0 0 " + n(w) + " " + n(h) +
         "\" role=\"img\" aria-label=\"" + fmt::html_escape(title) + "\"><title>" +
         fmt::html_escape(title) + "</title><text x=\"8\" y=\"18\" class=\"chart-title\">" +
         fmt::html_escape(title) + "</text>";
}

double nice_max(double m, double reference) {
  m = std::max(m, reference);
  if (!(m > 0)) return 1;
  return m * 1.1;
}

std::string legend(const std::vector<Series>& series, double x, double y) {
  std::string t;
  for (size_t i = 0; i < series.size(); ++i) {
    double lx = x + 150.0 * static_cast<double>(i);
    t += "<rect x=\"" + n(lx) + "\" y=\"" + n(y - 9) + "\" width=\"10\" height=\"10\" fill=\"" +
         kPalette[i % 8] + "\"/><text x=\"" + n(lx + 14) + "\" y=\"" + n(y) + "\">" +
         fmt::html_escape(series[i].name) + "</text>";
  }
  return t;
}

}  // namespace

std::string grouped_bars(const std::string& title, const std::vector<std::string>& categories,
                         const std::vector<Series>& series, double reference,
                         const std::string& unit) {
  const double left = 50, top = 40, plot_h = 200, bottom = 60;
  // Bars wide enough for their "0.85" labels; the canvas wide enough for the legend.
  const double group_w = std::max(40.0, 36.0 * static_cast<double>(series.size()) + 20);
  const double w = std::max(
      left + group_w * static_cast<double>(std::max<size_t>(categories.size(), 1)) + 20,
      left + 150.0 * static_cast<double>(series.size()) + 20);
  const double h = top + plot_h + bottom;
  double vmax = 0;
  for (const auto& s : series)
    for (double v : s.values)
      if (present(v)) vmax = std::max(vmax, v);
  vmax = nice_max(vmax, reference);
  auto y_of = [&](double v) { return top + plot_h - plot_h * v / vmax; };

  std::string t = open_svg(w, h, title);
  t += "<line x1=\"" + n(left) + "\" y1=\"" + n(top + plot_h) + "\" x2=\"" + n(w - 10) +
       "\" y2=\"" + n(top + plot_h) + "\" class=\"axis\"/>";
  t += "<text x=\"4\" y=\"" + n(top + 4) + "\" class=\"tick\">" + fmt::num(vmax, 2) +
       fmt::html_escape(unit) + "</text>";
  const double bar_w = (group_w - 20) / static_cast<double>(std::max<size_t>(series.size(), 1));
  for (size_t c = 0; c < categories.size(); ++c) {
    double gx = left + group_w * static_cast<double>(c) + 10;
    for (size_t si = 0; si < series.size(); ++si) {
      double v = c < series[si].values.size() ? series[si].values[c] : 0;
      if (!present(v)) continue;
      double x = gx + bar_w * static_cast<double>(si);
      t += "<rect class=\"bar\" x=\"" + n(x) + "\" y=\"" + n(y_of(v)) + "\" width=\"" +
           n(bar_w - 2) + "\" height=\"" + n(top + plot_h - y_of(v)) + "\" fill=\"" +
           kPalette[si % 8] + "\"><title>" + fmt::html_escape(categories[c] + " " +
           series[si].name + ": " + fmt::num(v, 3) + unit) + "</title></rect>";
      t += "<text x=\"" + n(x) + "\" y=\"" + n(y_of(v) - 3) + "\" class=\"val\">" +
           fmt::num(v, 2) + "</text>";
    }
    t += "<text x=\"" + n(gx) + "\" y=\"" + n(top + plot_h + 16) + "\" class=\"tick\">" +
         fmt::html_escape(categories[c]) + "</text>";
  }
  if (reference > 0)
    t += "<line x1=\"" + n(left) + "\" y1=\"" + n(y_of(reference)) + "\" x2=\"" + n(w - 10) +
         "\" y2=\"" + n(y_of(reference)) + "\" class=\"ref\"/>";
  t += legend(series, left, top + plot_h + 44);
  return t + "</svg>";
}

std::string horizontal_bars(const std::string& title, const std::vector<std::string>& labels,
                            const std::vector<double>& values, double reference,
                            const std::string& unit) {
  const double left = 260, top = 30, row_h = 16, plot_w = 420;
  const double h = top + row_h * static_cast<double>(labels.size()) + 20;
  const double w = left + plot_w + 80;
  double vmax = 0;
  for (double v : values)
    if (present(v)) vmax = std::max(vmax, v);
  vmax = nice_max(vmax, reference);
  auto x_of = [&](double v) { return left + plot_w * v / vmax; };

  std::string t = open_svg(w, h, title);
  for (size_t i = 0; i < labels.size(); ++i) {
    double y = top + row_h * static_cast<double>(i);
    t += "<text x=\"" + n(left - 6) + "\" y=\"" + n(y + 11) + "\" class=\"label\">" +
         fmt::html_escape(labels[i]) + "</text>";
    double v = i < values.size() ? values[i] : 0;
    if (!present(v)) {
      t += "<text x=\"" + n(left + 4) + "\" y=\"" + n(y + 11) + "\" class=\"val\">-</text>";
      continue;
    }
    const char* color = (reference > 0 && v < reference) ? "#e15759" : "#59a14f";
    t += "<rect class=\"bar\" x=\"" + n(left) + "\" y=\"" + n(y + 2) + "\" width=\"" +
         n(x_of(v) - left) + "\" height=\"" + n(row_h - 4) + "\" fill=\"" + color +
         "\"><title>" + fmt::html_escape(labels[i] + ": " + fmt::num(v, 3) + unit) +
         "</title></rect>";
    t += "<text x=\"" + n(x_of(v) + 4) + "\" y=\"" + n(y + 11) + "\" class=\"val\">" +
         fmt::num(v, 2) + fmt::html_escape(unit) + "</text>";
  }
  if (reference > 0)
    t += "<line x1=\"" + n(x_of(reference)) + "\" y1=\"" + n(top - 4) + "\" x2=\"" +
         n(x_of(reference)) + "\" y2=\"" + n(h - 16) + "\" class=\"ref\"/>";
  return t + "</svg>";
}

std::string lines(const std::string& title, const std::vector<std::string>& x_labels,
                  const std::vector<Series>& series, double reference, const std::string& unit) {
  const double left = 50, top = 40, plot_h = 200, plot_w = 560, bottom = 60;
  const double w = left + plot_w + 40, h = top + plot_h + bottom;
  double vmax = 0;
  for (const auto& s : series)
    for (double v : s.values)
      if (present(v)) vmax = std::max(vmax, v);
  vmax = nice_max(vmax, reference);
  const double step =
      x_labels.size() > 1 ? plot_w / static_cast<double>(x_labels.size() - 1) : plot_w;
  auto x_of = [&](size_t i) { return left + step * static_cast<double>(i); };
  auto y_of = [&](double v) { return top + plot_h - plot_h * v / vmax; };

  std::string t = open_svg(w, h, title);
  t += "<line x1=\"" + n(left) + "\" y1=\"" + n(top + plot_h) + "\" x2=\"" + n(left + plot_w) +
       "\" y2=\"" + n(top + plot_h) + "\" class=\"axis\"/>";
  t += "<text x=\"4\" y=\"" + n(top + 4) + "\" class=\"tick\">" + fmt::num(vmax, 2) +
       fmt::html_escape(unit) + "</text>";
  for (size_t i = 0; i < x_labels.size(); ++i)
    t += "<text x=\"" + n(x_of(i) - 20) + "\" y=\"" + n(top + plot_h + 16) +
         "\" class=\"tick\">" + fmt::html_escape(x_labels[i]) + "</text>";
  if (reference > 0)
    t += "<line x1=\"" + n(left) + "\" y1=\"" + n(y_of(reference)) + "\" x2=\"" +
         n(left + plot_w) + "\" y2=\"" + n(y_of(reference)) + "\" class=\"ref\"/>";
  for (size_t si = 0; si < series.size(); ++si) {
    std::string pts;
    for (size_t i = 0; i < series[si].values.size() && i < x_labels.size(); ++i) {
      double v = series[si].values[i];
      if (!present(v)) continue;
      pts += n(x_of(i)) + "," + n(y_of(v)) + " ";
      t += "<circle class=\"point\" cx=\"" + n(x_of(i)) + "\" cy=\"" + n(y_of(v)) +
           "\" r=\"3\" fill=\"" + kPalette[si % 8] + "\"><title>" +
           fmt::html_escape(series[si].name + " " + x_labels[i] + ": " + fmt::num(v, 3) + unit) +
           "</title></circle>";
    }
    if (!pts.empty())
      t += "<polyline class=\"line\" fill=\"none\" stroke=\"" + std::string(kPalette[si % 8]) +
           "\" stroke-width=\"2\" points=\"" + pts + "\"/>";
  }
  t += legend(series, left, top + plot_h + 44);
  return t + "</svg>";
}

}  // namespace kgate::report::svg
