#include "worker/stderr_ring.h"

#include <gtest/gtest.h>

namespace kgate::worker {
namespace {

TEST(StderrRing, KeepsEverythingUnderCapacity) {
  StderrRing r(64);
  r.append("one\ntwo\n");
  r.append("three\n");
  EXPECT_EQ(r.str(), "one\ntwo\nthree\n");
  EXPECT_EQ(r.dropped_bytes(), 0u);
  EXPECT_EQ(r.tail_lines(2), "two\nthree");
  EXPECT_EQ(r.tail_lines(10), "one\ntwo\nthree");
}

TEST(StderrRing, KeepsOnlyTheNewestBytes) {
  StderrRing r(10);
  r.append("abcdefghij");
  r.append("KLM");
  EXPECT_EQ(r.str(), "defghijKLM");
  EXPECT_EQ(r.dropped_bytes(), 3u);
  r.append(std::string(100, 'x') + "END");
  EXPECT_EQ(r.str(), "xxxxxxxEND");
  EXPECT_EQ(r.size(), 10u);
}

TEST(StderrRing, TailDropsTheTruncatedFirstLine) {
  StderrRing r(16);
  r.append("a very long first line\nsecond\nlast");
  // Only "line\nsecond\nlast"-ish survives; the cut line must not show.
  EXPECT_EQ(r.tail_lines(5), "second\nlast");
}

TEST(StderrRing, ClearForgets) {
  StderrRing r(8);
  r.append("12345678901");
  r.clear();
  EXPECT_EQ(r.str(), "");
  EXPECT_EQ(r.tail_lines(3), "");
}

}  // namespace
}  // namespace kgate::worker
