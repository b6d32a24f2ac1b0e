#include "core/file_io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"

namespace fs = std::filesystem;
using kgate::core::ReadResult;
using kgate::core::WriteResult;

namespace {

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("kgate_file_io_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void put(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Every entry of `dir` whose name says it is a temp file of the atomic writer.
std::vector<std::string> temps_in(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().find(".tmp") != std::string::npos) out.push_back(e.path().string());
  return out;
}

}  // namespace

TEST(CoreReadFile, ReturnsTheWholeFileBinarySafe) {
  const fs::path d = fresh_dir("ok");
  std::string bytes = "line 1\nline 2\r\n";
  bytes.push_back('\0');
  bytes += std::string(200000, 'x');  // more than one read() chunk
  put(d / "f.bin", bytes);
  ReadResult r = kgate::core::read_file((d / "f.bin").string());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.bytes, bytes);
  EXPECT_TRUE(r.error.empty());
}

TEST(CoreReadFile, AnEmptyFileIsOkAndEmpty) {
  const fs::path d = fresh_dir("empty");
  put(d / "e", "");
  ReadResult r = kgate::core::read_file((d / "e").string());
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.bytes, "");
}

TEST(CoreReadFile, AMissingFileIsNotFound) {
  const fs::path d = fresh_dir("missing");
  ReadResult r = kgate::core::read_file((d / "nope.json").string());
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.not_found());
  EXPECT_EQ(r.status, ReadResult::Status::kNotFound);
  EXPECT_NE(r.error.find("No such file"), std::string::npos) << r.error;
  // A file where a directory should be is not found either.
  put(d / "file", "x");
  EXPECT_TRUE(kgate::core::read_file((d / "file" / "below").string()).not_found());
}

TEST(CoreReadFile, ADirectoryIsAnErrorNotAnEmptyFile) {
  const fs::path d = fresh_dir("dir");
  ReadResult r = kgate::core::read_file(d.string());
  EXPECT_EQ(r.status, ReadResult::Status::kError);
  EXPECT_FALSE(r.not_found());
  EXPECT_TRUE(r.bytes.empty());
  EXPECT_NE(r.error.find("directory"), std::string::npos) << r.error;
}

TEST(CoreReadFile, AFifoIsAnErrorFoundWithoutBlocking) {
  const fs::path d = fresh_dir("fifo");
  const fs::path p = d / "demo.yaml";
  ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0);
  // No writer: a plain open() would wait forever; read_file must answer at once.
  ReadResult r = kgate::core::read_file(p.string());
  EXPECT_EQ(r.status, ReadResult::Status::kError);
  EXPECT_TRUE(r.bytes.empty());
  EXPECT_EQ(r.error, "not a regular file (a FIFO)");
}

TEST(CoreReadFile, ADeviceIsAnErrorNotAnUnboundedRead) {
  std::error_code ec;
  if (!fs::exists("/dev/zero", ec)) GTEST_SKIP() << "no /dev/zero";
  ReadResult r = kgate::core::read_file("/dev/zero");
  EXPECT_EQ(r.status, ReadResult::Status::kError);
  EXPECT_TRUE(r.bytes.empty());
  EXPECT_EQ(r.error, "not a regular file (a character device)");
  EXPECT_THROW(kgate::core::read_file_or_throw<kgate::UsageError>("/dev/zero", "/dev/zero: cannot read"),
               kgate::UsageError);
}

TEST(CoreReadFile, AFileOverTheCapIsAnErrorStatingTheCap) {
  const fs::path d = fresh_dir("cap");
  put(d / "at", std::string(1024, 'a'));
  put(d / "over", std::string(1025, 'b'));
  ReadResult at = kgate::core::read_file((d / "at").string(), 1024);
  ASSERT_TRUE(at.ok()) << at.error;
  EXPECT_EQ(at.bytes.size(), 1024u);
  ReadResult over = kgate::core::read_file((d / "over").string(), 1024);
  EXPECT_EQ(over.status, ReadResult::Status::kError);
  EXPECT_TRUE(over.bytes.empty());
  EXPECT_EQ(over.error, "the file is larger than the 1 KiB limit for it (1025 bytes)");
  // The default cap is finite and far above anything kgate writes.
  EXPECT_TRUE(kgate::core::read_file((d / "over").string()).ok());
  EXPECT_LT(kgate::core::kConfigReadCap, kgate::core::kDefaultReadCap);
}

TEST(CoreReadFile, ASymlinkToARegularFileIsRead) {
  const fs::path d = fresh_dir("symlink");
  put(d / "real", "abc");
  fs::create_symlink(d / "real", d / "link");
  ReadResult r = kgate::core::read_file((d / "link").string());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.bytes, "abc");
}

TEST(CoreFormatCap, NamesTheUnit) {
  EXPECT_EQ(kgate::core::format_cap(std::size_t{16} << 20), "16 MiB");
  EXPECT_EQ(kgate::core::format_cap(std::size_t{256} << 20), "256 MiB");
  EXPECT_EQ(kgate::core::format_cap(std::size_t{2} << 30), "2 GiB");
  EXPECT_EQ(kgate::core::format_cap(4096), "4 KiB");
  EXPECT_EQ(kgate::core::format_cap(1000), "1000 bytes");
  EXPECT_EQ(kgate::core::format_cap(1), "1 byte");
}

TEST(CoreReadFile, AnUnreadableFileIsAnErrorWithTheSystemsWords) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  const fs::path d = fresh_dir("unreadable");
  put(d / "secret", "x");
  ::chmod((d / "secret").c_str(), 0);
  ReadResult r = kgate::core::read_file((d / "secret").string());
  EXPECT_EQ(r.status, ReadResult::Status::kError);
  EXPECT_NE(r.error.find("Permission denied"), std::string::npos) << r.error;
  ::chmod((d / "secret").c_str(), 0644);
}

TEST(CoreReadFile, OrThrowThrowsTheCallersError) {
  const fs::path d = fresh_dir("throw");
  put(d / "a", "abc");
  EXPECT_EQ(kgate::core::read_file_or_throw<kgate::UsageError>((d / "a").string(), "unused"), "abc");
  try {
    kgate::core::read_file_or_throw<kgate::UsageError>((d / "b").string(), "b: cannot read the file");
    FAIL() << "no throw";
  } catch (const kgate::UsageError& e) {
    EXPECT_STREQ(e.what(), "b: cannot read the file");
  }
  EXPECT_THROW(kgate::core::read_file_or_throw<kgate::InfraError>(d.string(), "dir"), kgate::InfraError);
}

TEST(CoreWriteFileAtomic, ReplacesTheWholeFileAndLeavesNoTemp) {
  const fs::path d = fresh_dir("replace");
  const fs::path p = d / "run.json";
  put(p, std::string(10000, 'o'));  // longer than the new content: nothing of it may remain
  WriteResult r = kgate::core::write_file_atomic(p.string(), "new\n");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.message(), "");
  EXPECT_EQ(kgate::core::read_file(p.string()).bytes, "new\n");
  EXPECT_TRUE(temps_in(d).empty());
  // Two writes in one process use distinct temp files.
  WriteResult r2 = kgate::core::write_file_atomic(p.string(), "newer\n");
  ASSERT_TRUE(r2.ok());
  EXPECT_NE(r.tmp, r2.tmp);
  EXPECT_EQ(kgate::core::read_file(p.string()).bytes, "newer\n");
  EXPECT_TRUE(temps_in(d).empty());
}

TEST(CoreWriteFileAtomic, CreatesTheParentDirectory) {
  const fs::path d = fresh_dir("parent");
  const fs::path p = d / "a" / "b" / "c.txt";
  ASSERT_TRUE(kgate::core::write_file_atomic(p.string(), "x").ok());
  EXPECT_EQ(kgate::core::read_file(p.string()).bytes, "x");
}

TEST(CoreWriteFileAtomic, AParentThatCannotBeCreatedIsAClearError) {
  const fs::path d = fresh_dir("noparent");
  put(d / "file", "x");  // a file where the directory should be
  const fs::path p = d / "file" / "sub" / "out.json";
  WriteResult r = kgate::core::write_file_atomic(p.string(), "x");
  EXPECT_EQ(r.stage, WriteResult::Stage::kCreateDir);
  EXPECT_EQ(r.where, (d / "file" / "sub").string());
  EXPECT_NE(r.message().find((d / "file" / "sub").string() + ": cannot create the directory: "), std::string::npos)
      << r.message();
  EXPECT_EQ(temps_in(d), std::vector<std::string>{});
  try {
    kgate::core::write_file_atomic_or_throw(p.string(), "x");
    FAIL() << "no throw";
  } catch (const kgate::InfraError& e) {
    EXPECT_EQ(std::string(e.what()), r.message());
  }
}

TEST(CoreWriteFileAtomic, AReadOnlyDirectoryFailsAtTheTempAndKeepsTheOldFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
  const fs::path d = fresh_dir("readonly");
  const fs::path p = d / "cal.json";
  put(p, "old");
  ::chmod(d.c_str(), 0555);
  WriteResult r = kgate::core::write_file_atomic(p.string(), "new");
  ::chmod(d.c_str(), 0755);
  EXPECT_EQ(r.stage, WriteResult::Stage::kOpen);
  EXPECT_EQ(r.where, r.tmp);
  EXPECT_EQ(r.tmp.rfind(p.string() + ".tmp.", 0), 0u) << r.tmp;
  EXPECT_NE(r.message().find(": cannot write: Permission denied"), std::string::npos) << r.message();
  EXPECT_EQ(kgate::core::read_file(p.string()).bytes, "old");
  EXPECT_TRUE(temps_in(d).empty());
}

TEST(CoreWriteFileAtomic, ARenameThatFailsRemovesTheTemp) {
  const fs::path d = fresh_dir("rename");
  const fs::path p = d / "target";
  fs::create_directories(p / "busy");  // a non-empty directory cannot be replaced by a file
  WriteResult r = kgate::core::write_file_atomic(p.string(), "x");
  EXPECT_EQ(r.stage, WriteResult::Stage::kRename);
  EXPECT_EQ(r.where, p.string());
  EXPECT_NE(r.message().find(p.string() + ": cannot rename into place: "), std::string::npos) << r.message();
  EXPECT_FALSE(fs::exists(r.tmp));
  EXPECT_TRUE(temps_in(d).empty());
  EXPECT_TRUE(fs::is_directory(p / "busy"));
}

TEST(CoreGitBlobId, IsWhatGitHashObjectPrints) {
  EXPECT_EQ(kgate::core::git_blob_id(""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
  EXPECT_EQ(kgate::core::git_blob_id("hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");
}

TEST(CoreTempFiles, TellsAWritersTempAndItsPid) {
  using kgate::core::temp_file_writer;
  EXPECT_EQ(temp_file_writer("level__softmax.json.tmp.4242.0"), 4242);
  EXPECT_EQ(temp_file_writer("run.json.tmp.17.12"), 17);
  EXPECT_EQ(temp_file_writer("ab12.cpp.tmp-999-3"), 999);
  EXPECT_EQ(temp_file_writer("0123abcd.tmp.31337.so"), 31337);
  EXPECT_EQ(temp_file_writer("a.tmp.json.tmp.12.0"), 12);
  // Not temps: a plain name, a file of the user's named .tmp, half a pattern.
  EXPECT_EQ(temp_file_writer("level__softmax.json"), 0);
  EXPECT_EQ(temp_file_writer("notes.tmp"), 0);
  EXPECT_EQ(temp_file_writer("x.tmp.12"), 0);
  EXPECT_EQ(temp_file_writer("x.tmp.12.a"), 0);
  EXPECT_EQ(temp_file_writer("x.tmp-12.0"), 0);
  EXPECT_EQ(temp_file_writer(".tmp.12.0"), 0);
}

TEST(CoreTempFiles, RemovesTheTempsOfDeadWritersOnly) {
  const fs::path d = fresh_dir("stale");
  fs::create_directories(d / "results");
  fs::create_directories(d / "cache" / "host");
  fs::create_directories(d / "workspaces" / "p" / ".git");
  // A pid that is gone: a child that has exited and been reaped.
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  int status = 0;
  ::waitpid(dead, &status, 0);
  const std::string dp = std::to_string(dead), live = std::to_string(::getpid());
  put(d / "results" / ("native__a.json.tmp." + dp + ".0"), "");
  put(d / "cache" / "host" / ("k.cpp.tmp-" + dp + "-1"), "half");
  put(d / "results" / ("native__b.json.tmp." + live + ".0"), "mine, being written");
  put(d / "results" / "native__a.json", "{}");
  put(d / "workspaces" / "p" / ".git" / ("x.tmp." + dp + ".0"), "git's own");
  std::vector<std::string> removed = kgate::core::remove_stale_temps(d.string());
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed, (std::vector<std::string>{(d / "cache" / "host" / ("k.cpp.tmp-" + dp + "-1")).string(),
                                               (d / "results" / ("native__a.json.tmp." + dp + ".0")).string()}));
  EXPECT_TRUE(fs::exists(d / "results" / ("native__b.json.tmp." + live + ".0")));
  EXPECT_TRUE(fs::exists(d / "results" / "native__a.json"));
  EXPECT_TRUE(fs::exists(d / "workspaces" / "p" / ".git" / ("x.tmp." + dp + ".0")));
  EXPECT_TRUE(kgate::core::remove_stale_temps((d / "missing").string()).empty());
}
