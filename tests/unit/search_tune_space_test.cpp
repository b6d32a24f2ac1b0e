#include "search/tune_space.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace kgate::search {
namespace {

const char* kSource = R"(// starter
// kgate:tune BLOCK=[64, 128,256,512] ROWS=[1,2,4]
// kgate:tune UNROLL=[1,4]
#ifndef BLOCK
#define BLOCK 128
#endif
#ifndef ROWS
#  define ROWS 8   // deliberately poor
#endif
int f() { return BLOCK * ROWS * UNROLL; }
)";

TEST(SearchTuneSpace, ParsesNamesValuesAndDefaults) {
  TuneSpace s = parse_tune_space(kSource, "k.cpp");
  ASSERT_EQ(s.params.size(), 3u);
  EXPECT_EQ(s.params[0].name, "BLOCK");
  EXPECT_EQ(s.params[0].values, (std::vector<std::string>{"64", "128", "256", "512"}));
  EXPECT_EQ(s.params[0].default_value, "128");
  EXPECT_EQ(s.params[0].line, 2);
  // A default missing from the list is still the start point, so it joins the list.
  EXPECT_EQ(s.params[1].default_value, "8");
  EXPECT_EQ(s.params[1].values.front(), "8");
  // No #define line: the first value.
  EXPECT_EQ(s.params[2].default_value, "1");
  EXPECT_EQ(s.size(), 4u * 4u * 2u);
  EXPECT_EQ(format_point(s.default_point()), "BLOCK=128 ROWS=8 UNROLL=1");
}

TEST(SearchTuneSpace, PythonHashComments) {
  TuneSpace s = parse_tune_space("# kgate:tune BLOCK_SIZE=[256,1024]\nBLOCK_SIZE = 1024\n", "k.py");
  ASSERT_EQ(s.params.size(), 1u);
  EXPECT_EQ(s.params[0].default_value, "1024");
  EXPECT_EQ(apply_point("BLOCK_SIZE = 1024\nx = 1\n", {{"BLOCK_SIZE", "256"}}), "BLOCK_SIZE = 256\nx = 1\n");
}

TEST(SearchTuneSpace, NoCommentMeansEmptySpace) {
  EXPECT_TRUE(parse_tune_space("int x; // kgate is great\n", "k.cpp").empty());
  // The marker outside a comment is not a declaration.
  EXPECT_TRUE(parse_tune_space("const char* s = \"kgate:tune A=[1]\";\n", "k.cpp").empty());
}

TEST(SearchTuneSpace, ErrorsNameFileLineColumn) {
  auto expect_error = [](const std::string& src, const std::string& needle) {
    try {
      parse_tune_space(src, "bad.cpp");
      FAIL() << "no error for: " << src;
    } catch (const UsageError& e) {
      std::string m = e.what();
      EXPECT_EQ(m.rfind("bad.cpp:", 0), 0u) << m;
      EXPECT_NE(m.find(needle), std::string::npos) << m;
    }
  };
  expect_error("// kgate:tune BLOCK=[1,2\n", "missing ']'");
  expect_error("// kgate:tune BLOCK=1,2\n", "expected '['");
  expect_error("// kgate:tune BLOCK\n", "expected '='");
  expect_error("// kgate:tune BLOCK=[1,,2]\n", "empty value");
  expect_error("// kgate:tune BLOCK=[1,1]\n", "listed twice");
  expect_error("// kgate:tune A=[1]\n// kgate:tune A=[2]\n", "declared twice");
  expect_error("// kgate:tune\n", "declares nothing");
  expect_error("x\n// kgate:tune 9A=[1]\n", "bad.cpp:2:");
}

TEST(SearchTuneSpace, ApplyPointRewritesOnlyDefaultLines) {
  std::string out = apply_point(kSource, {{"BLOCK", "512"}, {"ROWS", "2"}});
  EXPECT_NE(out.find("#define BLOCK 512\n"), std::string::npos) << out;
  EXPECT_NE(out.find("#  define ROWS 2   // deliberately poor"), std::string::npos) << out;
  EXPECT_NE(out.find("kgate:tune BLOCK=[64, 128,256,512]"), std::string::npos);
  // Re-parsing the rewritten file gives the new point as the default.
  EXPECT_EQ(format_point(parse_tune_space(out, "k.cpp").default_point()), "BLOCK=512 ROWS=2 UNROLL=1");
}

}  // namespace
}  // namespace kgate::search
