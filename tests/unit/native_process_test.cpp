// The real kgate-native binary over pipes (env KGATE_NATIVE_BIN).
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "native_fixture_match.h"

extern char** environ;

namespace kgate::native {
namespace {
namespace fs = std::filesystem;
using testing::Json;

class RunnerProcess {
 public:
  explicit RunnerProcess(const std::string& bin, const std::string& stderr_path) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char* argv[] = {const_cast<char*>(bin.c_str()), nullptr};
    int rc = posix_spawn(&pid_, bin.c_str(), &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(in[0]);
    ::close(out[1]);
    if (rc != 0) throw std::runtime_error("cannot spawn " + bin);
    to_ = in[1];
    from_ = out[0];
  }
  ~RunnerProcess() {
    close_stdin();
    if (from_ >= 0) ::close(from_);
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  void send(const std::string& line) {
    std::string s = line + "\n";
    ASSERT_EQ(::write(to_, s.data(), s.size()), static_cast<ssize_t>(s.size()));
  }
  void close_stdin() {
    if (to_ >= 0) ::close(to_);
    to_ = -1;
  }
  // One response line, or "" on EOF / timeout.
  std::string read_line(int timeout_ms = 60000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      if (auto nl = buf_.find('\n'); nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return line;
      }
      int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      deadline - std::chrono::steady_clock::now())
                                      .count());
      if (left <= 0) return "";
      pollfd p{from_, POLLIN, 0};
      if (::poll(&p, 1, left) <= 0) continue;
      char chunk[4096];
      ssize_t n = ::read(from_, chunk, sizeof chunk);
      if (n <= 0) return "";
      buf_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  Json call(const std::string& line) {
    send(line);
    std::string r = read_line();
    Json j = Json::parse(r, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not a JSON response: '" << r << "'";
    return j;
  }
  // Everything left on stdout after EOF.
  std::string drain() {
    std::string rest = buf_;
    char chunk[4096];
    ssize_t n;
    while ((n = ::read(from_, chunk, sizeof chunk)) > 0) rest.append(chunk, static_cast<std::size_t>(n));
    buf_.clear();
    return rest;
  }
  int wait() {
    int st = 0;
    ::waitpid(pid_, &st, 0);
    reaped_ = true;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  bool reaped_ = false;
  std::string buf_;
};

class NativeProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* b = std::getenv("KGATE_NATIVE_BIN");
    bin_ = b && *b ? b : std::string(KGATE_BINARY_DIR) + "/kgate-native";
    ASSERT_TRUE(fs::exists(bin_)) << bin_;
    dir_ = testing::make_temp_dir("proc");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string hello() const {
    return R"({"v":1,"id":1,"op":"hello","backend":"host","cache_dir":")" + dir_ + "/cache\"}";
  }
  std::string bin_, dir_;
};

TEST_F(NativeProcess, CandidateStdoutGoesToStderrAndTheProtocolSurvives) {
  RunnerProcess p(bin_, dir_ + "/stderr.txt");
  ASSERT_TRUE(p.call(hello())["ok"].get<bool>());
  ASSERT_TRUE(p.call(R"({"v":1,"id":2,"op":"load_problem","problem":{"id":"p","op":"softmax"}})")["ok"].get<bool>());
  Json c = p.call(R"({"v":1,"id":3,"op":"compile","source_path":")" + std::string(KGATE_TEST_DATA) +
                  "/candidates/runner/softmax_prints.cpp\"}");
  ASSERT_TRUE(c["result"]["compiled"].get<bool>()) << c.dump();
  Json r = p.call(R"({"v":1,"id":4,"op":"check","cases":[{"case_id":"a","seed":1,"dims":{"R":3,"C":9},"atol":1e-6,"rtol":1e-5}]})");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["id"], 4);
  EXPECT_EQ(r["result"]["cases"][0]["outputs"][0]["over_tol"], 0);
  Json s = p.call(R"({"v":1,"id":5,"op":"shutdown"})");
  EXPECT_TRUE(s["ok"].get<bool>());
  EXPECT_EQ(p.drain(), "");  // nothing but responses ever reached stdout
  EXPECT_EQ(p.wait(), 0);
  std::string err = testing::read_text(dir_ + "/stderr.txt");
  EXPECT_NE(err.find("\"candidate\": \"noise\""), std::string::npos) << err;
  EXPECT_NE(err.find("raw"), std::string::npos) << err;
}

TEST_F(NativeProcess, GarbageIsAnsweredAndEofExitsZero) {
  RunnerProcess p(bin_, dir_ + "/stderr.txt");
  for (const char* junk : {"garbage", "{\"v\":1", "\x01\x02\xff", "{}", "null"}) {
    Json r = p.call(junk);
    EXPECT_FALSE(r["ok"].get<bool>()) << junk;
    EXPECT_EQ(r["error"]["kind"], "bad_request") << junk;
  }
  EXPECT_TRUE(p.call(hello())["ok"].get<bool>());  // still serving
  p.close_stdin();
  EXPECT_EQ(p.drain(), "");
  EXPECT_EQ(p.wait(), 0);
}

TEST_F(NativeProcess, CudaHelloNeverCrashes) {
  RunnerProcess p(bin_, dir_ + "/stderr.txt");
  Json r = p.call(R"({"v":1,"id":1,"op":"hello","backend":"cuda"})");
  if (r["ok"].get<bool>()) {
    EXPECT_EQ(r["result"]["backend"], "cuda");  // a machine with a GPU and the plugin
  } else {
    EXPECT_EQ(r["error"]["kind"], "unsupported") << r.dump();
  }
  Json s = p.call(R"({"v":1,"id":2,"op":"shutdown"})");
  EXPECT_TRUE(s["ok"].get<bool>());
  EXPECT_EQ(p.wait(), 0);
}

TEST_F(NativeProcess, CrashingCandidateKillsOnlyTheRunner) {
  // The orchestrator's view of a crash: the pipe closes without a response.
  fs::path src = fs::path(dir_) / "segv.cpp";
  {
    std::ofstream o(src);
    o << "#include \"kgate/kernel.h\"\n"
         "extern \"C\" int kgate_run(const kgate_tensor*, int32_t, kgate_tensor*, int32_t, void*) {\n"
         "  volatile int* p = nullptr; return *p;\n}\n";
  }
  RunnerProcess p(bin_, dir_ + "/stderr.txt");
  p.call(hello());
  p.call(R"({"v":1,"id":2,"op":"load_problem","problem":{"id":"p","op":"softmax"}})");
  ASSERT_TRUE(p.call(R"({"v":1,"id":3,"op":"compile","source_path":")" + src.string() + "\"}")["result"]["compiled"].get<bool>());
  p.send(R"({"v":1,"id":4,"op":"check","cases":[{"case_id":"a","seed":1,"dims":{"R":2,"C":3}}]})");
  EXPECT_EQ(p.read_line(), "");
  EXPECT_EQ(p.wait(), 128 + SIGSEGV);
}

}  // namespace
}  // namespace kgate::native
