#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

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
                            const std::string& unit, double fixed_max) {
  const double left = 260, top = 30, row_h = 16, plot_w = 420;
  const double h = top + row_h * static_cast<double>(labels.size()) + (fixed_max > 0 ? 36 : 20);
  const double w = left + plot_w + 80;
  double vmax = 0;
  for (double v : values)
    if (present(v)) vmax = std::max(vmax, v);
  vmax = fixed_max > 0 ? fixed_max : nice_max(vmax, reference);
  auto x_of = [&](double v) { return left + plot_w * std::min(v, vmax) / vmax; };

  std::string t = open_svg(w, h, title);
  if (fixed_max > 0) {
    const double y = top + row_h * static_cast<double>(labels.size()) + 14;
    for (double v : {0.0, vmax / 2, vmax})
      t += "<text x=\"" + n(x_of(v)) + "\" y=\"" + n(y) + "\" class=\"tick\">" + fmt::num(v, 0) +
           fmt::html_escape(unit) + "</text>";
  }
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

std::vector<double> y_ticks(double lo, double hi, bool log_scale) {
  std::vector<double> t;
  if (!(hi > lo)) return t;
  if (log_scale) {
    if (!(lo > 0)) return t;
    const int a = static_cast<int>(std::floor(std::log2(lo) + 1e-9));
    const int b = static_cast<int>(std::ceil(std::log2(hi) - 1e-9));
    const bool halves = b - a <= 3;  // a short range gets 1.5 * 2^k too
    for (int k = a; k <= b; ++k) {
      const double v = std::ldexp(1.0, k);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) t.push_back(v);
      if (halves && 1.5 * v >= lo * (1 - 1e-9) && 1.5 * v <= hi * (1 + 1e-9)) t.push_back(1.5 * v);
    }
    return t;
  }
  for (int i = 0; i <= 4; ++i) t.push_back(lo + (hi - lo) * i / 4);
  return t;
}

std::string trend(const std::string& title, const std::vector<std::string>& x_labels,
                  const std::vector<TrendSeries>& series, const TrendAxes& axes) {
  const double left = 60, top = 40, plot_h = 200, plot_w = 560, bottom = 70;
  const double w = left + plot_w + 110, h = top + plot_h + bottom;
  // The y range: every value and whisker, and the reference line.
  double vmin = std::numeric_limits<double>::infinity(), vmax = 0;
  auto take = [&](double v) {
    if (!present(v)) return;
    vmin = std::min(vmin, v);
    vmax = std::max(vmax, v);
  };
  for (const auto& s : series) {
    for (double v : s.values) take(v);
    for (double v : s.lo) take(v);
    for (double v : s.hi) take(v);
  }
  take(axes.reference);
  double lo = 0, hi = 1;
  if (axes.log_scale) {
    if (!(vmax > 0)) vmin = vmax = 1;
    lo = std::ldexp(1.0, static_cast<int>(std::floor(std::log2(vmin) + 1e-9)));
    hi = std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(vmax) - 1e-9)));
    if (!(hi > lo)) hi = lo * 2;
  } else if (axes.y_max > axes.y_min) {
    lo = axes.y_min;
    hi = axes.y_max;
  } else {
    hi = nice_max(vmax, axes.reference);
  }
  auto y_of = [&](double v) {
    double f = axes.log_scale ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : (v - lo) / (hi - lo);
    f = std::clamp(f, 0.0, 1.0);
    return top + plot_h - plot_h * f;
  };
  // x: by position (dates) when given, else evenly.
  const size_t nx = x_labels.size();
  const bool by_pos = axes.x.size() == nx && nx > 1 && axes.x.back() > axes.x.front();
  auto x_of = [&](size_t i) {
    if (nx <= 1) return left + plot_w / 2;
    double f = by_pos ? (axes.x[i] - axes.x.front()) / (axes.x.back() - axes.x.front())
                      : static_cast<double>(i) / static_cast<double>(nx - 1);
    return left + plot_w * f;
  };

  std::string t = open_svg(w, h, title);
  t += "<line x1=\"" + n(left) + "\" y1=\"" + n(top + plot_h) + "\" x2=\"" + n(left + plot_w) + "\" y2=\"" +
       n(top + plot_h) + "\" class=\"axis\"/>";
  t += "<line x1=\"" + n(left) + "\" y1=\"" + n(top) + "\" x2=\"" + n(left) + "\" y2=\"" + n(top + plot_h) +
       "\" class=\"axis\"/>";
  for (double v : y_ticks(lo, hi, axes.log_scale)) {
    const double y = y_of(v);
    t += "<line x1=\"" + n(left - 4) + "\" y1=\"" + n(y) + "\" x2=\"" + n(left) + "\" y2=\"" + n(y) +
         "\" class=\"axis\"/><text x=\"" + n(left - 6) + "\" y=\"" + n(y + 4) + "\" class=\"tick ytick label\">" +
         fmt::num(v, v >= 10 || v == std::floor(v) ? 0 : 2) + fmt::html_escape(axes.unit) + "</text>";
  }
  // x labels: all of them up to 14, else every k-th (the first and last always).
  const size_t every = nx > 14 ? (nx + 13) / 14 : 1;
  for (size_t i = 0; i < nx; ++i) {
    if (i % every != 0 && i + 1 != nx) continue;
    t += "<text x=\"" + n(x_of(i)) + "\" y=\"" + n(top + plot_h + 14) + "\" class=\"tick xtick\" " +
         "transform=\"rotate(30 " + n(x_of(i)) + " " + n(top + plot_h + 14) + ")\">" +
         fmt::html_escape(x_labels[i]) + "</text>";
  }
  if (present(axes.reference)) {
    const double y = y_of(axes.reference);
    t += "<line x1=\"" + n(left) + "\" y1=\"" + n(y) + "\" x2=\"" + n(left + plot_w) + "\" y2=\"" + n(y) +
         "\" class=\"ref\"/>";
    if (!axes.reference_label.empty())
      t += "<text x=\"" + n(left + plot_w + 4) + "\" y=\"" + n(y + 4) + "\" class=\"ref-label\">" +
           fmt::html_escape(axes.reference_label) + "</text>";
  }
  for (size_t si = 0; si < series.size(); ++si) {
    const TrendSeries& s = series[si];
    const char* color = kPalette[si % 8];
    std::string pts;
    for (size_t i = 0; i < s.values.size() && i < nx; ++i) {
      const double v = s.values[i];
      if (!present(v)) continue;
      const double x = x_of(i), y = y_of(v);
      pts += n(x) + "," + n(y) + " ";
      const double l = i < s.lo.size() ? s.lo[i] : std::numeric_limits<double>::quiet_NaN();
      const double u = i < s.hi.size() ? s.hi[i] : std::numeric_limits<double>::quiet_NaN();
      std::string tip = s.name + " " + x_labels[i] + ": " + fmt::num(v, 3) + axes.unit;
      if (present(l) && present(u)) {
        tip += " [" + fmt::num(l, 3) + ", " + fmt::num(u, 3) + "]";
        t += "<line class=\"whisker\" x1=\"" + n(x) + "\" y1=\"" + n(y_of(l)) + "\" x2=\"" + n(x) + "\" y2=\"" +
             n(y_of(u)) + "\" stroke=\"" + color + "\"/>";
      }
      const bool flag = i < s.flagged.size() && s.flagged[i];
      if (flag) tip += " (dip)";
      t += "<circle class=\"point\" cx=\"" + n(x) + "\" cy=\"" + n(y) + "\" r=\"3\" fill=\"" + color +
           "\"><title>" + fmt::html_escape(tip) + "</title></circle>";
      if (flag)
        t += "<circle class=\"dip\" cx=\"" + n(x) + "\" cy=\"" + n(y) +
             "\" r=\"7\" fill=\"none\" stroke=\"#cf222e\" stroke-width=\"2\"/>";
    }
    if (!pts.empty() && s.line)
      t += "<polyline class=\"line\" fill=\"none\" stroke=\"" + std::string(color) +
           "\" stroke-width=\"2\" points=\"" + pts + "\"/>";
  }
  std::vector<Series> names;
  for (const auto& s : series) names.push_back(Series{s.name, {}});
  t += legend(names, left, top + plot_h + 62);
  return t + "</svg>";
}

}  // namespace kgate::report::svg
