#include "search/journal.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/error.h"

namespace fs = std::filesystem;

namespace kgate::search {
namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("kgate-journal-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static inline int counter = 0;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SearchJournal, WritesVersionHeaderAndReplaysEvents) {
  TempDir d;
  std::string p = (d.path / "journal.jsonl").string();
  {
    Journal j(p, {{"run_id", "r1"}});
    j.append({{"event", "experiment"}, {"n", 0}});
    j.append({{"event", "experiment"}, {"n", 1}});
  }
  {
    Journal again(p, {{"run_id", "ignored"}});  // existing file: no second header
    again.append({{"event", "experiment"}, {"n", 2}});
  }
  auto c = Journal::read(p, false);
  EXPECT_EQ(c.header["format"], "kgate-journal");
  EXPECT_EQ(c.header["v"], 1);
  EXPECT_EQ(c.header["run_id"], "r1");
  ASSERT_EQ(c.events.size(), 3u);
  EXPECT_EQ(c.events[2]["n"], 2);
  EXPECT_FALSE(c.torn_tail);
}

// A complete line that is JSON but not an event (an array appended by hand) is named by
// its line, not read as an event nor reported as an internal type error later.
TEST(SearchJournal, ALineThatIsNotAnEventIsAnErrorWithItsLine) {
  TempDir d;
  std::string p = (d.path / "journal.jsonl").string();
  {
    Journal j(p, {{"run_id", "r1"}});
    j.append({{"event", "experiment"}, {"n", 0}});
  }
  { std::ofstream(p, std::ios::app) << "[1,2,3]\n" << R"({"event":"experiment","n":1})" << "\n"; }
  try {
    Journal::read(p, false);
    FAIL() << "no error";
  } catch (const InfraError& e) {
    EXPECT_NE(std::string(e.what()).find("journal.jsonl:3: error: not a journal event"), std::string::npos) << e.what();
  }
  auto c = Journal::read((d.path / "missing.jsonl").string(), false);
  EXPECT_TRUE(c.events.empty() && c.lines.empty());
}

TEST(SearchJournal, TornLastLineIsDroppedAndTruncated) {
  TempDir d;
  std::string p = (d.path / "journal.jsonl").string();
  {
    Journal j(p, {{"run_id", "r1"}});
    j.append({{"event", "experiment"}, {"n", 0}});
  }
  std::string good = slurp(p);
  { std::ofstream(p, std::ios::app) << R"({"event":"experiment","n":1,"comm)"; }
  auto c = Journal::read(p, /*repair=*/false);
  EXPECT_TRUE(c.torn_tail);
  EXPECT_EQ(c.events.size(), 1u);
  EXPECT_NE(slurp(p), good);  // read-only: untouched
  c = Journal::read(p, /*repair=*/true);
  EXPECT_TRUE(c.torn_tail);
  EXPECT_EQ(slurp(p), good);  // repaired: the torn bytes are gone
  {
    Journal j(p, {});
    j.append({{"event", "experiment"}, {"n", 1}});
  }
  c = Journal::read(p, false);
  EXPECT_FALSE(c.torn_tail);
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[1]["n"], 1);
}

TEST(SearchJournal, DamagedMiddleLineAndForeignFilesAreErrors) {
  TempDir d;
  std::string p = (d.path / "journal.jsonl").string();
  { std::ofstream(p) << R"({"format":"kgate-journal","v":1})" "\n" "garbage\n" R"({"n":1})" "\n"; }
  EXPECT_THROW(Journal::read(p, true), InfraError);
  { std::ofstream(p) << R"({"something":"else"})" "\n"; }
  EXPECT_THROW(Journal::read(p, true), UsageError);
  { std::ofstream(p) << R"({"format":"kgate-journal","v":99})" "\n"; }
  EXPECT_THROW(Journal::read(p, true), UsageError);
  auto missing = Journal::read((d.path / "none.jsonl").string(), true);
  EXPECT_TRUE(missing.header.is_null());
}

}  // namespace
// A write that fails part-way (here the file-size limit, what a full disk does to a
// journal) leaves the journal at its last whole line: no torn tail to repair, and the
// next append after space came back is a whole line after it.
TEST(SearchJournal, AnAppendThatFailsPartWayLeavesNoTornLine) {
  TempDir d;
  const std::string p = (d.path / "journal.jsonl").string();
  Journal j(p, {{"run_id", "r1"}});
  j.append({{"event", "experiment"}, {"n", 0}});
  const std::string before = slurp(p);
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  struct sigaction ign {}, prev {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGXFSZ, &ign, &prev);  // EFBIG instead of the signal
  struct rlimit small = old;
  small.rlim_cur = before.size() + 16;  // room for a part of the next line only
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  try {
    j.append({{"event", "experiment"}, {"n", 1}, {"description", std::string(200, 'x')}});
  } catch (const InfraError& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("journal.jsonl: write failed: "), std::string::npos) << e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::sigaction(SIGXFSZ, &prev, nullptr);
  EXPECT_TRUE(threw);
  EXPECT_EQ(slurp(p), before);
  Journal::Contents c = Journal::read(p, false);
  EXPECT_FALSE(c.torn_tail);
  ASSERT_EQ(c.events.size(), 1u);
  j.append({{"event", "experiment"}, {"n", 1}});
  c = Journal::read(p, false);
  EXPECT_FALSE(c.torn_tail);
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[1]["n"], 1);
}

// Only a regular file is a journal: a directory or a FIFO in its place is an error naming
// the path (never a blocked read, never "nothing to resume").
TEST(SearchJournal, AJournalThatIsNoFileIsAnError) {
  TempDir d;
  const fs::path dirj = d.path / "a" / "journal.jsonl";
  fs::create_directories(dirj);
  try {
    Journal::read(dirj.string(), true);
    FAIL() << "no error";
  } catch (const InfraError& e) {
    EXPECT_NE(std::string(e.what()).find(dirj.string() + ": cannot read the journal: "), std::string::npos) << e.what();
  }
  const fs::path fifo = d.path / "journal.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  try {
    Journal::read(fifo.string(), true);
    FAIL() << "no error";
  } catch (const InfraError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file (a FIFO)"), std::string::npos) << e.what();
  }
}

}  // namespace kgate::search
