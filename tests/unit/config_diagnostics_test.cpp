#include "config/diagnostics.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace kgate::config {
namespace {

TEST(ConfigDiagnostics, FormatsFileLineColumn) {
  Diagnostics d;
  d.error({"a.yaml", 3, 7}, "bad thing");
  d.warning({"a.yaml", 0, 0}, "odd thing");
  d.error({"b.yaml", 2, 0}, "no column");
  ASSERT_EQ(d.items().size(), 3u);
  EXPECT_EQ(d.items()[0].str(), "a.yaml:3:7: error: bad thing");
  EXPECT_EQ(d.items()[1].str(), "a.yaml: warning: odd thing");
  EXPECT_EQ(d.items()[2].str(), "b.yaml:2: error: no column");
  EXPECT_EQ(d.error_count(), 2);
  EXPECT_EQ(d.warning_count(), 1);
  EXPECT_TRUE(d.has_errors());
}

TEST(ConfigDiagnostics, SortsByFileThenPositionKeepingReportOrder) {
  Diagnostics d;
  d.error({"b.yaml", 1, 1}, "b1");
  d.error({"a.yaml", 9, 1}, "a9");
  d.error({"a.yaml", 2, 5}, "a2 first");
  d.error({"a.yaml", 2, 5}, "a2 second");
  d.error({"a.yaml", 2, 1}, "a2 col1");
  d.sort();
  EXPECT_EQ(d.str(),
            "a.yaml:2:1: error: a2 col1\n"
            "a.yaml:2:5: error: a2 first\n"
            "a.yaml:2:5: error: a2 second\n"
            "a.yaml:9:1: error: a9\n"
            "b.yaml:1:1: error: b1");
}

TEST(ConfigDiagnostics, ThrowsUsageErrorWithEveryErrorOnlyWhenThereAreErrors) {
  Diagnostics d;
  EXPECT_NO_THROW(d.throw_if_errors());
  d.warning({"w.yaml", 1, 1}, "just a warning");
  EXPECT_NO_THROW(d.throw_if_errors());
  d.error({"z.yaml", 4, 2}, "second");
  d.error({"a.yaml", 1, 1}, "first");
  try {
    d.throw_if_errors();
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_EQ(std::string(e.what()),
              "a.yaml:1:1: error: first\nw.yaml:1:1: warning: just a warning\n"
              "z.yaml:4:2: error: second");
  }
}

TEST(ConfigDiagnostics, AppendKeepsCounts) {
  Diagnostics a, b;
  a.error({"a", 1, 1}, "x");
  b.error({"b", 1, 1}, "y");
  b.warning({"b", 2, 1}, "z");
  a.append(b);
  EXPECT_EQ(a.error_count(), 2);
  EXPECT_EQ(a.warning_count(), 1);
}

}  // namespace
}  // namespace kgate::config
