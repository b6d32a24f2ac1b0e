#include "native/host_compiler.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "native_fixture_match.h"

namespace kgate::native {
namespace {
namespace fs = std::filesystem;

const std::string kOk =
    "#include \"kgate/kernel.h\"\n"
    "extern \"C\" int kgate_run(const kgate_tensor*, int32_t, kgate_tensor*, int32_t, void*) {\n"
    "  return VALUE;\n}\n";

HostCompileRequest request(const std::string& cache, const std::string& text,
                           std::map<std::string, std::string> defines = {{"VALUE", "3"}}) {
  HostCompileRequest r;
  r.text = text;
  r.cache_dir = cache;
  r.defines = std::move(defines);
  return r;
}

TEST(NativeHostCompiler, ContentHashIsGitBlobSha1) {
  // `printf 'hello\n' | git hash-object --stdin`
  EXPECT_EQ(content_hash("hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");
}

TEST(NativeHostCompiler, CompilesThenHitsTheCache) {
  std::string cache = testing::make_temp_dir("hc");
  HostCompiler cc;
  auto first = cc.compile(request(cache, kOk));
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(fs::exists(first.so_path));
  EXPECT_EQ(fs::path(first.so_path).parent_path(), fs::path(cache) / "host");
  EXPECT_GT(first.compile_ms, 0);

  auto again = cc.compile(request(cache, kOk));
  ASSERT_TRUE(again.ok);
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.so_path, first.so_path);
  EXPECT_LT(again.compile_ms, first.compile_ms);

  // Defines are part of the key.
  auto other = cc.compile(request(cache, kOk, {{"VALUE", "4"}}));
  ASSERT_TRUE(other.ok);
  EXPECT_FALSE(other.cache_hit);
  EXPECT_NE(other.so_path, first.so_path);
  // No temporaries are left behind.
  for (const auto& e : fs::directory_iterator(fs::path(cache) / "host")) {
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
  }
  fs::remove_all(cache);
}

TEST(NativeHostCompiler, ErrorKeepsTheCompilerLogAndCachesNothing) {
  std::string cache = testing::make_temp_dir("hc");
  HostCompiler cc;
  auto r = cc.compile(request(cache, "#line 1 \"/somewhere/cand.cpp\"\nint f( { return 1; }\n"));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.so_path.empty());
  EXPECT_NE(r.log.find("/somewhere/cand.cpp:1"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("compiler exited"), std::string::npos) << r.log;
  EXPECT_TRUE(fs::is_empty(fs::path(cache) / "host"));
  fs::remove_all(cache);
}

TEST(NativeHostCompiler, UndefinedSymbolsFailAtCompileTime) {
  std::string cache = testing::make_temp_dir("hc");
  HostCompiler cc;
  auto r = cc.compile(request(cache, "extern int missing_thing(); int g() { return missing_thing(); }\n"));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("missing_thing"), std::string::npos) << r.log;
  fs::remove_all(cache);
}

TEST(NativeHostCompiler, TrimLogKeepsHeadAndTail) {
  std::string log = "FIRST" + std::string(100000, 'x') + "LAST";
  std::string t = trim_log(log, 1000);
  EXPECT_LT(t.size(), 1100u);
  EXPECT_EQ(t.rfind("FIRST", 0), 0u);
  EXPECT_EQ(t.substr(t.size() - 4), "LAST");
  EXPECT_NE(t.find("omitted"), std::string::npos);
  EXPECT_EQ(trim_log("short", 1000), "short");
}

TEST(NativeHostCompiler, RunCaptureReportsStatusAndOutput) {
  std::string out;
  EXPECT_EQ(run_capture({"sh", "-c", "echo out; echo err >&2; exit 3"}, &out), 3);
  EXPECT_NE(out.find("out"), std::string::npos);
  EXPECT_NE(out.find("err"), std::string::npos);
  EXPECT_EQ(run_capture({"/no/such/binary-kgate"}, &out), -1);
  EXPECT_NE(out.find("/no/such/binary-kgate"), std::string::npos);
}

}  // namespace
}  // namespace kgate::native
