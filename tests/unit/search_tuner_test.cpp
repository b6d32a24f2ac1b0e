#include "search/tuner.h"

#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "core/error.h"

namespace kgate::search {
namespace {

TuneSpace space_of(const std::string& src) { return parse_tune_space(src, "k.cpp"); }

// A synthetic objective with one optimum: |log2(BLOCK/256)| + |log2(ROWS/4)| + 1.
double cost(const Point& p) {
  return 1 + std::abs(std::log2(std::stod(p.at("BLOCK")) / 256)) +
         std::abs(std::log2(std::stod(p.at("ROWS")) / 4));
}

// Drives a tuner the way the search loop does: keep when 1% better than the best.
struct Drive {
  std::vector<Point> proposed;
  double best = 0;
  Point best_point;
};
Drive drive(Tuner& t, int budget) {
  Drive d;
  d.best_point = t.space().default_point();
  d.best = cost(d.best_point);
  t.observe(d.best_point, true, d.best);  // the baseline
  for (int i = 0; i < budget; ++i) {
    auto p = t.propose();
    if (!p) break;
    d.proposed.push_back(*p);
    double c = cost(*p);
    bool keep = c < d.best * 0.99;
    if (keep) {
      d.best = c;
      d.best_point = *p;
    }
    t.observe(*p, keep, c);
  }
  return d;
}

const char* kSmall =
    "// kgate:tune BLOCK=[32,64,128,256,512,1024] ROWS=[1,2,4,8,16]\n#define BLOCK 32\n#define ROWS 16\n";

TEST(SearchTuner, StartsFromTheDeclaredDefaultAndConverges) {
  Tuner t(space_of(kSmall), 7);
  auto first = t.propose();
  ASSERT_TRUE(first);
  EXPECT_EQ(format_point(*first), "BLOCK=32 ROWS=16");
  Drive d = drive(t, 14);
  EXPECT_EQ(format_point(d.best_point), "BLOCK=256 ROWS=4");
  EXPECT_LE(d.proposed.size(), 14u);
}

TEST(SearchTuner, NeverRepeatsAPointAndExhaustsTheSpace) {
  Tuner t(space_of(kSmall), 3);
  Drive d = drive(t, 1000);
  std::set<std::string> seen{format_point(t.space().default_point())};
  for (const auto& p : d.proposed) EXPECT_TRUE(seen.insert(format_point(p)).second) << format_point(p);
  EXPECT_EQ(seen.size(), 30u);  // every point exactly once, then nothing
  EXPECT_FALSE(t.propose());
}

TEST(SearchTuner, FailedPointsDoNotMoveTheSearch) {
  Tuner t(space_of(kSmall), 1);
  t.observe(t.space().default_point(), true, 10.0);
  for (int i = 0; i < 5; ++i) {
    auto p = t.propose();
    ASSERT_TRUE(p);
    t.observe(*p, false, std::nullopt);
    EXPECT_TRUE(t.measured(*p));
  }
}

TEST(SearchTuner, DeterministicInSeedAndObservations) {
  Tuner a(space_of(kSmall), 11), b(space_of(kSmall), 11);
  Drive da = drive(a, 20), db = drive(b, 20);
  ASSERT_EQ(da.proposed.size(), db.proposed.size());
  for (size_t i = 0; i < da.proposed.size(); ++i) EXPECT_EQ(da.proposed[i], db.proposed[i]);
}

TEST(SearchTuner, LargeSpacesUseASpreadSampleAndStillConverge) {
  std::string src =
      "// kgate:tune BLOCK=[16,32,64,128,256,512,1024,2048] ROWS=[1,2,4,8,16,32] "
      "PAD=[0,1,2,3]\n#define BLOCK 16\n#define ROWS 32\n";
  Tuner t(space_of(src), 5);
  ASSERT_GT(t.space().size(), 64u);
  Drive d = drive(t, 40);
  EXPECT_EQ(d.best_point.at("BLOCK"), "256");
  EXPECT_EQ(d.best_point.at("ROWS"), "4");
  std::set<std::string> seen;
  for (const auto& p : d.proposed) EXPECT_TRUE(seen.insert(format_point(p)).second);
}

// `kgate:tune-local` (kernel files around a compiler's own config): a large space is
// searched outward from the default one axis step at a time, never by a random spread.
TEST(SearchTuner, LocalSpacesDescendFromTheDefault) {
  std::string src =
      "# kgate:tune BLOCK=[16,32,64,128,256,512,1024,2048] ROWS=[1,2,4,8,16,32] PAD=[0,1,2,3]\n"
      "# kgate:tune-local\nBLOCK = 128\nROWS = 8\nPAD = 0\n";
  TuneSpace space = parse_tune_space(src, "k.py");
  EXPECT_TRUE(space.local);
  ASSERT_EQ(space.params.size(), 3u);  // the directive declares nothing itself
  Tuner t(space, 5);
  ASSERT_GT(t.space().size(), 64u);
  // Every proposal is one axis step from the best so far (until the descent is exhausted).
  Point best = t.space().default_point();
  double best_cost = cost(best);
  t.observe(best, true, best_cost);
  for (int i = 0; i < 10; ++i) {
    auto p = t.propose();
    ASSERT_TRUE(p.has_value());
    int moved = 0;
    for (const auto& [k, v] : *p) moved += v != best.at(k);
    EXPECT_EQ(moved, 1) << "proposal " << i << ": " << format_point(*p) << " from " << format_point(best);
    double c = cost(*p);
    bool keep = c < best_cost * 0.99;
    if (keep) best = *p, best_cost = c;
    t.observe(*p, keep, c);
  }
  EXPECT_EQ(best.at("BLOCK"), "256");
  EXPECT_EQ(best.at("ROWS"), "4");
}

// In a local space the axes are walked in the order the file declares them, nearest
// values first, larger before smaller: what a kernel's move-on rule leaves time for.
TEST(SearchTuner, LocalSpacesWalkTheirAxesInDeclaredOrder) {
  std::string src =
      "# kgate:tune BLOCK=[64,128,256] ROWS=[1,2,4] PAD=[0,1]\n"
      "# kgate:tune-local\nBLOCK = 128\nROWS = 2\nPAD = 0\n";
  for (uint64_t seed : {1u, 5u, 99u}) {
    Tuner t(parse_tune_space(src, "k.py"), seed);
    Point def = t.space().default_point();
    t.observe(def, true, 100.0);
    std::vector<std::string> got;
    for (int i = 0; i < 5; ++i) {
      auto p = t.propose();
      ASSERT_TRUE(p.has_value());
      got.push_back(format_point(*p));
      t.observe(*p, false, 200.0);  // every step reverted
    }
    EXPECT_EQ(got, (std::vector<std::string>{"BLOCK=256 PAD=0 ROWS=2", "BLOCK=64 PAD=0 ROWS=2",
                                             "BLOCK=128 PAD=0 ROWS=4", "BLOCK=128 PAD=0 ROWS=1",
                                             "BLOCK=128 PAD=1 ROWS=2"}))
        << "seed " << seed;
  }
}

}  // namespace
}  // namespace kgate::search

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "search/tuner_agent.h"

namespace kgate::search {
namespace {

// After a resume, the baseline is replayed with an empty point: descriptions still name
// the value each knob moves from (the declared default), never "?".
TEST(TunerAgent, DescriptionsStartFromTheDeclaredDefaults) {
  namespace fs = std::filesystem;
  const std::string src = "// kgate:tune BLOCK=[64,128,256] ROWS=[1,2]\n#ifndef BLOCK\n#define BLOCK 64\n#endif\n"
                          "#ifndef ROWS\n#define ROWS 1\n#endif\n";
  fs::path dir = fs::temp_directory_path() / ("kgate-tuner-agent-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  { std::ofstream(dir / "k.cpp") << src; }
  TunerAgent agent(parse_tune_space(src, "k.cpp"), 7);
  agent.replay(Point{}, /*kept=*/true, 100.0);
  AgentContext ctx;
  ctx.workspace = dir.string();
  ctx.candidate = "k.cpp";
  Proposal p = agent.propose(ctx);
  EXPECT_EQ(p.description.find('?'), std::string::npos) << p.description;
  EXPECT_TRUE(p.description.find("64->") != std::string::npos || p.description.find("1->") != std::string::npos)
      << p.description;
  fs::remove_all(dir);
}

// `kgate:tune-seed` (another search's choice, e.g. Inductor's coordinate descent): the
// first proposal after the default, even in a local space; kept, it becomes the center of
// the descent.
TEST(SearchTuner, SeedsAreMeasuredFirstAndDescendedFrom) {
  std::string src =
      "# kgate:tune BLOCK=[16,32,64,128,256,512,1024,2048] ROWS=[1,2,4,8,16,32] PAD=[0,1,2,3]\n"
      "# kgate:tune-local\n# kgate:tune-seed BLOCK=512 ROWS=4\nBLOCK = 128\nROWS = 8\nPAD = 0\n";
  TuneSpace space = parse_tune_space(src, "k.py");
  ASSERT_EQ(space.seeds.size(), 1u);
  EXPECT_EQ(format_point(space.seeds[0]), "BLOCK=512 PAD=0 ROWS=4");
  Tuner t(space, 5);
  Point def = space.default_point();
  t.observe(def, true, cost(def));
  auto p = t.propose();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(format_point(*p), "BLOCK=512 PAD=0 ROWS=4");
  t.observe(*p, true, cost(*p) * 0.5);  // kept
  auto q = t.propose();
  ASSERT_TRUE(q.has_value());
  int moved = 0;
  for (const auto& [k, v] : *q) moved += v != p->at(k);
  EXPECT_EQ(moved, 1) << format_point(*q) << " is not one step from the kept seed";
}

TEST(SearchTuneSpace, SeedErrorsNameTheLine) {
  auto err = [](const std::string& src) {
    try {
      parse_tune_space(src, "k.py");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(err("# kgate:tune B=[1,2]\n# kgate:tune-seed C=1\nB = 1\n").find("k.py:2:1: error: kgate:tune-seed names 'C'"),
            std::string::npos);
  EXPECT_NE(err("# kgate:tune B=[1,2]\n# kgate:tune-seed B=4\nB = 1\n").find("k.py:2:1: error: kgate:tune-seed value B=4"),
            std::string::npos);
  EXPECT_NE(err("# kgate:tune B=[1,2]\n# kgate:tune-seed B\n").find("k.py:2:"), std::string::npos);
  EXPECT_NE(err("# kgate:tune B=[1,2]\n# kgate:tune-seed\n").find("names no value"), std::string::npos);
}

}  // namespace
}  // namespace kgate::search
