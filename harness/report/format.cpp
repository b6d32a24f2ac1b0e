#include "report/format.h"

#include <cstdio>

namespace kgate::report::fmt {

std::string num(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string speedup(double v) { return num(v, 3) + "x"; }

std::string speedup(const std::optional<double>& v) { return v ? speedup(*v) : "-"; }

std::string speedup_ci(double v, double lo, double hi) {
  if (!(v > 0)) return "-";  // not measured (error, skipped)
  return speedup(v) + " [" + num(lo, 3) + ", " + num(hi, 3) + "]";
}

std::string result_speedup(double best_us, double v, double lo, double hi) {
  return best_us > 0 ? speedup_ci(v, lo, hi) : "-";
}

std::string us(double v) {
  if (!(v > 0)) return "-";
  return num(v, v < 10 ? 2 : 1) + " us";
}

std::string pct(double f) {
  if (!(f > 0)) return "-";
  return num(100.0 * f, 1) + "%";
}

std::string fraction_pct(double f) { return num(100.0 * f, 1) + "%"; }

std::string short_sha(const std::string& sha) { return sha.substr(0, 10); }

std::string xml_safe(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') c = '?';
  }
  return out;
}

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : xml_safe(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n' || c == '\r') out += ' ';
    else if (c == '|') out += "\\|";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

}  // namespace kgate::report::fmt
