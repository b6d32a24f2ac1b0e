#pragma once
// Number and text formatting shared by the reporters, so every output writes the same
// value the same way ("1.234x", "12.3 us", "65.0%", "-" for not measured).
#include <optional>
#include <string>

namespace kgate::report::fmt {

std::string num(double v, int decimals);                 // "%.<d>f"
std::string speedup(double v);                           // "1.234x"
std::string speedup(const std::optional<double>& v);     // "-" when absent
std::string speedup_ci(double v, double lo, double hi);  // "1.234x [1.200, 1.260]"
// A result's speedup with its interval, "-" when the result has no time of its own
// (best_us <= 0: an error, a starter that failed its gates, a skipped problem), whatever
// its record's speedup field holds.
std::string result_speedup(double best_us, double v, double lo, double hi);
std::string us(double v);                                // "12.3 us", "-" when 0
std::string pct(double fraction);                        // 0.65 -> "65.0%", "-" when not > 0 (pct_roofline is a fraction)
std::string fraction_pct(double fraction);               // 0.51 -> "51.0%"
std::string short_sha(const std::string& sha);           // first 10 chars

// Text safe for XML 1.0 (control characters other than \t \n \r become '?').
std::string xml_safe(const std::string& s);
std::string html_escape(const std::string& s);
// One Markdown table cell: no newlines, '|' escaped.
std::string md_cell(const std::string& s);

}  // namespace kgate::report::fmt
