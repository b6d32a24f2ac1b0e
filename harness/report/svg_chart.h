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

// One horizontal bar per label; bars >= reference are green, below are red.
std::string horizontal_bars(const std::string& title, const std::vector<std::string>& labels,
                            const std::vector<double>& values, double reference,
                            const std::string& unit);

// Lines over x labels (one per series), for trends.
std::string lines(const std::string& title, const std::vector<std::string>& x_labels,
                  const std::vector<Series>& series, double reference, const std::string& unit);

}  // namespace kgate::report::svg
