#include "config/diagnostics.h"

#include <algorithm>
#include <tuple>

#include "core/error.h"

namespace kgate::config {

std::string Diagnostic::str() const {
  std::string s = loc.str();
  s += severity == Severity::kError ? ": error: " : ": warning: ";
  s += message;
  return s;
}

void Diagnostics::error(const SourceLoc& loc, std::string message) {
  items_.push_back({loc, Severity::kError, std::move(message)});
  ++errors_;
}

void Diagnostics::warning(const SourceLoc& loc, std::string message) {
  items_.push_back({loc, Severity::kWarning, std::move(message)});
}

void Diagnostics::sort() {
  std::stable_sort(items_.begin(), items_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.loc.file, a.loc.line, a.loc.column) <
           std::tie(b.loc.file, b.loc.line, b.loc.column);
  });
}

std::string Diagnostics::str() const {
  std::string s;
  for (const auto& d : items_) {
    if (!s.empty()) s += '\n';
    s += d.str();
  }
  return s;
}

void Diagnostics::throw_if_errors() const {
  if (!has_errors()) return;
  Diagnostics copy = *this;
  copy.sort();
  throw UsageError(copy.str());
}

void Diagnostics::append(const Diagnostics& other) {
  for (const auto& d : other.items_) {
    items_.push_back(d);
    if (d.severity == Severity::kError) ++errors_;
  }
}

}  // namespace kgate::config
