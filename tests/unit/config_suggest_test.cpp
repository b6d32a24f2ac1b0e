#include "config/suggest.h"

#include <gtest/gtest.h>

namespace kgate::config {
namespace {

TEST(ConfigSuggest, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("bench", "bech"), 1u);
  EXPECT_EQ(edit_distance("peak_bandwith_gbps", "peak_bandwidth_gbps"), 1u);
}

TEST(ConfigSuggest, SuggestsOnlyPlausibleTypos) {
  std::vector<std::string> keys = {"bench", "host_bench", "sweep", "dtypes", "bench_dtype"};
  EXPECT_EQ(closest("bnech", keys), "bench");
  EXPECT_EQ(closest("dtype", keys), "dtypes");
  EXPECT_EQ(closest("swep", keys), "sweep");
  EXPECT_EQ(closest("completely_different", keys), "");
  EXPECT_EQ(closest("x", {"y"}), "");  // replacing the whole word is not a typo
  EXPECT_EQ(did_you_mean("benhc", keys), " (did you mean 'bench'?)");
  EXPECT_EQ(did_you_mean("zzzzzzzz", keys), "");
}

}  // namespace
}  // namespace kgate::config
