#include "gates/static_gate.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/includes.h"

namespace kgate::gates {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> tokens(const std::vector<LintFinding>& f) {
  std::vector<std::string> out;
  for (const auto& x : f) out.push_back(x.token);
  return out;
}

TEST(Lint, FindsEachForbiddenConstructWithItsLine) {
  const char* src =
      "#include <thread>\n"                              // 1
      "void f() {\n"                                     // 2
      "  cudaStream_t s; cudaStreamCreate(&s);\n"        // 3
      "  std::thread t([]{});\n"                         // 4
      "  auto fut = std::async([]{ return 1; });\n"      // 5
      "  pthread_create(0, 0, 0, 0);\n"                  // 6
      "  if (fork() == 0) execvp(\"sh\", 0);\n"          // 7
      "  system(\"ls\"); popen(\"ls\", \"r\");\n"        // 8
      "  FILE* fp = fopen(\"/etc/passwd\", \"r\");\n"    // 9
      "  std::ofstream out(\"x\"); std::ifstream in;\n"  // 10
      "  int fd = open(\"x\", 0); socket(1, 2, 3); connect(fd, 0, 0);\n"  // 11
      "  cudaDeviceReset(); cudaSetDevice(1); cuStreamCreate(0, 0);\n"    // 12
      "}\n";
  auto f = lint_candidate(src);
  // A stream of the candidate's own is no finding: joined before return it is correct
  // (tests/redteam/native_cuda/unusual_own_stream_joined.cu); work left on it is caught
  // while timed (side-stream detection, the graph-replay audit).
  std::vector<std::string> want = {"<thread>", "std::thread", "std::async",
                                   "pthread_create(", "fork(", "execvp(", "system(", "popen(",
                                   "fopen(", "std::ofstream", "std::ifstream", "open(", "socket(",
                                   "connect(", "cudaDeviceReset", "cudaSetDevice"};
  EXPECT_EQ(tokens(f), want);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].line, 1);
  EXPECT_EQ(f[0].rule, "threads");
  EXPECT_EQ(f[1].line, 4);
  EXPECT_EQ(f[1].rule, "threads");
  EXPECT_EQ(f.back().line, 12);
  EXPECT_NE(f[1].str().find("line 4:3: std::thread: "), std::string::npos) << f[1].str();
}

TEST(Lint, IgnoresCommentsStringsAndLookalikes) {
  const char* src =
      "// std::thread t; fopen(\"x\"); system(\"rm\");\n"
      "/* cudaStreamCreate(&s);\n"
      "   pthread_create */\n"
      "const char* a = \"std::thread fopen( socket(\";\n"
      "const char* b = R\"x(system(\"ls\") \" open( )x\";\n"
      "char c = '\\''; char d = '\"';\n"
      "int reopen_count = 0, open_files = 1, my_open(int);\n"
      "thread_local int tl = 0;\n"
      "struct S { void opened(); void fopen_like(); };\n"
      "int n = 1'000'000; int h = 0xFF'FF;\n"
      "int e = 1e3;\n";
  auto f = lint_candidate(src);
  EXPECT_TRUE(f.empty()) << f.front().str();
}

TEST(Lint, DigitSeparatorsDoNotHideCode) {
  // A hex literal with a separator must not open a "character literal" that swallows
  // the rest of the line.
  auto f = lint_candidate("int h = 0xF'F; system(\"x\");\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].token, "system(");
}

TEST(Lint, StripKeepsLinesAndColumns) {
  std::string src = "a /* x\ny */ b // z\n\"s\\\"t\" c\n";
  std::string s = strip_comments_and_strings(src);
  ASSERT_EQ(s.size(), src.size());
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 3);
  EXPECT_EQ(s.find('x'), std::string::npos);
  EXPECT_EQ(s.find('z'), std::string::npos);
  EXPECT_EQ(s.find('s'), std::string::npos);
  EXPECT_EQ(s[src.find('b')], 'b');
  EXPECT_EQ(s[src.find('c')], 'c');
}

TEST(Lint, FixtureCandidates) {
  auto read = [](const std::string& name) {
    std::ifstream in(std::string(KGATE_TEST_DATA) + "/candidates/softmax/" + name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_TRUE(lint_candidate(read("ok.cpp")).empty());
  auto f = lint_candidate(read("forbidden_thread.cpp"));
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rule, "threads");
}

TEST(Lint, IncludedFilesAreLintedAndUnfollowableIncludesAreFindings) {
  const fs::path dir = fs::temp_directory_path() / ("kgate_lint_inc_" + std::to_string(::getpid()));
  const fs::path outside = fs::temp_directory_path() / ("kgate_lint_out_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::remove_all(outside);
  fs::create_directories(dir / "sub");
  fs::create_directories(outside);
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(dir / "sub" / "hidden.inc", "#include \"deeper.inc\"\nvoid h() {\n  std::thread t([]{});\n}\n");
  write(dir / "sub" / "deeper.inc", "int d = 0;\nvoid g() { system(\"x\"); }\n");
  write(outside / "far.h", "void far() { fopen(\"x\", \"r\"); }\n");
  const std::string cand = (dir / "kernel.cpp").string();
  const std::string src = "#include \"kgate/kernel.h\"\n#include <vector>\n#include \"sub/hidden.inc\"\n"
                          "#include \"" + (outside / "far.h").string() + "\"\nint k;\n";
  auto f = lint_candidate_file(cand, src);
  ASSERT_EQ(f.size(), 3u);
  // Files in the order the walk reaches them, each named beneath the candidate's directory
  // when it is there, else in full.
  EXPECT_EQ(f[0].file, "sub/hidden.inc");
  EXPECT_EQ(f[0].token, "std::thread");
  EXPECT_EQ(f[0].line, 3);
  EXPECT_EQ(f[0].str(), "sub/hidden.inc (included), line 3:3: std::thread: candidates must not start threads or processes");
  EXPECT_EQ(f[1].file, "sub/deeper.inc");
  EXPECT_EQ(f[1].token, "system(");
  EXPECT_EQ(f[2].file, fs::weakly_canonical(outside / "far.h").string());
  EXPECT_EQ(f[2].token, "fopen(");
  // The candidate's own findings come first, with no file.
  auto own = lint_candidate_file(cand, "void k() { fork(); }\n#include \"sub/deeper.inc\"\n");
  ASSERT_EQ(own.size(), 2u);
  EXPECT_EQ(own[0].file, "");
  EXPECT_EQ(own[0].token, "fork(");
  EXPECT_EQ(own[1].file, "sub/deeper.inc");
  // An #include the compiler never sees (commented out, by line or block) is not followed
  // and its file not linted; a "//" inside a string literal is not a comment.
  auto quiet = lint_candidate_file(cand, "// #include \"sub/hidden.inc\"\n/* old:\n#include \"sub/deeper.inc\"\n*/\n"
                                         "const char* u = \"http://x\";\nint k;\n");
  EXPECT_TRUE(quiet.empty()) << quiet.front().str();
  auto after = lint_candidate_file(cand, "const char* u = \"a//b\"; /* x */ \n#include \"sub/deeper.inc\"\n");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].file, "sub/deeper.inc");
  EXPECT_EQ(core::blank_comments("a /* b */ \"c//d\" // e\nf", false), "a         \"c//d\"     \nf");
  EXPECT_EQ(core::blank_comments("a /* b */ \"c//d\" // e\nf", true), "a                    \nf");

  // Forms the walk cannot follow are findings of their own.
  auto g = lint_candidate("#define HIDE \"x.h\"\n#include HIDE\n#include_next <y.h>\n#import \"z.h\"\n"
                          "#include <../../tmp/w.h>\n#include <cmath>\n#include \"ok.h\"\n"
                          "// #include MACRO_IN_A_COMMENT\n");
  ASSERT_EQ(g.size(), 4u) << g.front().str();
  for (const auto& x : g) EXPECT_EQ(x.rule, "include") << x.str();
  EXPECT_EQ(g[0].line, 2);
  EXPECT_EQ(g[0].token, "#include HIDE");
  EXPECT_EQ(g[1].line, 3);
  EXPECT_EQ(g[2].line, 4);
  EXPECT_EQ(g[3].line, 5);
  EXPECT_EQ(g[3].token, "#include<../../tmp/w.h>");
  fs::remove_all(dir);
  fs::remove_all(outside);
}

class WorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kgate_ws_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sub");
    fs::create_directories(dir_ / ".git");
    write("kernel.cpp", "int k;");
    write("sub/helper.h", "int h;");
    write(".git/HEAD", "ref: x");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }
  fs::path dir_;
};

TEST_F(WorkspaceTest, ChangesAreListed) {
  auto before = core::snapshot_workspace(dir_.string(), {"kernel.cpp"});
  EXPECT_EQ(before.files.size(), 1u);  // sub/helper.h
  write("sub/helper.h", "changed");
  write("added.h", "x");
  auto after = core::snapshot_workspace(dir_.string(), {"kernel.cpp"});
  std::vector<std::string> want = {"added.h (added)", "sub/helper.h (modified)"};
  EXPECT_EQ(describe_workspace_changes(before, after), want);
  fs::remove(dir_ / "sub/helper.h");
  auto gone = core::snapshot_workspace(dir_.string(), {"kernel.cpp"});
  EXPECT_EQ(describe_workspace_changes(after, gone), std::vector<std::string>{"sub/helper.h (removed)"});
  // A mode change alone is not the gate's business (it checks contents).
  fs::permissions(dir_ / "added.h", fs::perms::owner_read, fs::perm_options::replace);
  gone = core::snapshot_workspace(dir_.string(), {"kernel.cpp"});
  EXPECT_EQ(describe_workspace_changes(after, gone), std::vector<std::string>{"sub/helper.h (removed)"});
}

TEST_F(WorkspaceTest, HashFileIsTheGitBlobId) {
  write("hello.txt", "hello\n");
  // `printf 'hello\n' | git hash-object --stdin`
  EXPECT_EQ(hash_file((dir_ / "hello.txt").string()), "ce013625030ba8dba906f756967f9e9ca394464a");
  EXPECT_EQ(hash_file((dir_ / "missing").string()), "");
}

// Was: a directory read as empty and hashed as the empty blob (e69de29...), so a directory
// given as a baseline passed the evaluator's "cannot read the baseline" check.
TEST_F(WorkspaceTest, HashFileOfADirectoryIsUnreadable) {
  fs::create_directories(dir_ / "sub");
  EXPECT_EQ(hash_file((dir_ / "sub").string()), "");
  EXPECT_EQ(hash_bytes(""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

}  // namespace
}  // namespace kgate::gates
