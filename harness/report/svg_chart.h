#pragma once
// Inline SVG charts for the self-contained HTML reports (no scripts, no network).
// Each returns one <svg> element; NaN / missing values draw no bar.
#include <string>
#include <vector>

namespace kgate::report::svg {

struct Series {
  std::string name;
  std::vector<double> values;  // one per category; <= 0 or NaN = missing
};

// Grouped vertical bars, one group per category, with a dashed reference line (e.g. 1.0x).
std::string grouped_bars(const std::string& title, const std::vector<std::string>& categories,
                         const std::vector<Series>& series, double reference,
                         const std::string& unit);

// One horizontal bar per label; bars >= reference are green, below are red. `fixed_max` > 0:
// the axis ends there whatever the values (roofline: 100 %), with 0 and it as ticks.
std::string horizontal_bars(const std::string& title, const std::vector<std::string>& labels,
                            const std::vector<double>& values, double reference,
                            const std::string& unit, double fixed_max = 0);

// One line of a trend chart: a value per x position, with an optional interval per point
// (drawn as a whisker) and points to flag (a dip: drawn as a red ring).
struct TrendSeries {
  std::string name;
  std::vector<double> values;  // one per x; <= 0 or NaN = missing
  std::vector<double> lo;      // whisker bounds per x (empty = none; NaN = none at that x)
  std::vector<double> hi;
  std::vector<bool> flagged;   // per x (empty = none)
  bool line = true;            // join the points (false: points only)
};

struct TrendAxes {
  // Where each x label sits (e.g. days since the epoch, so that a night without a run leaves
  // its gap); empty = evenly spaced.
  std::vector<double> x;
  bool log_scale = false;  // speedups: ratios read the same up and down (ticks at 2^k, 1.5 * 2^k)
  double y_min = 0;        // linear: fixed bounds when y_max > y_min (roofline: 0..100)
  double y_max = 0;
  double reference = 0;    // a dashed horizontal line (1.0x), 0 = none
  std::string reference_label;  // drawn beside it ("accepted 2.00x"), "" = none
  std::string unit;
};

// Lines over x labels (one per series), for trends: y ticks with their values, whiskers,
// flagged points, a labelled reference line.
std::string trend(const std::string& title, const std::vector<std::string>& x_labels,
                  const std::vector<TrendSeries>& series, const TrendAxes& axes);

// The y ticks trend() draws for [lo, hi] (exposed for tests): log scale: 2^k and 1.5 * 2^k
// within the range, widened to one octave at least; linear: five even steps.
std::vector<double> y_ticks(double lo, double hi, bool log_scale);

}  // namespace kgate::report::svg
