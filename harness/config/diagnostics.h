#pragma once
// Diagnostics: every problem found while loading configs, collected instead of thrown so a
// single `kgate validate` run reports all of them, each as "file:line:col: error: what".
#include <string>
#include <vector>

#include "config/types.h"

namespace kgate::config {

enum class Severity { kError, kWarning };

struct Diagnostic {
  SourceLoc loc;
  Severity severity = Severity::kError;
  std::string message;
  std::string str() const;  // "file:line:col: error: message"
};

class Diagnostics {
 public:
  void error(const SourceLoc& loc, std::string message);
  void warning(const SourceLoc& loc, std::string message);

  bool has_errors() const { return errors_ > 0; }
  int error_count() const { return errors_; }
  int warning_count() const { return static_cast<int>(items_.size()) - errors_; }
  bool empty() const { return items_.empty(); }
  const std::vector<Diagnostic>& items() const { return items_; }

  // Orders by file, then line, then column; equal locations keep the order they were
  // reported in. Called once loading is done so output reads top to bottom per file.
  void sort();
  // One diagnostic per line, no trailing newline.
  std::string str() const;
  // Throws UsageError holding every diagnostic when there is at least one error.
  void throw_if_errors() const;
  void append(const Diagnostics& other);

 private:
  std::vector<Diagnostic> items_;
  int errors_ = 0;
};

}  // namespace kgate::config
