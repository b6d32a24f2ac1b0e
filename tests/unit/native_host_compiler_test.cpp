#include "native/host_compiler.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "core/file_io.h"
#include "native/source_key.h"
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
  EXPECT_EQ(core::git_blob_id("hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");  // the cache key hash
}

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(NativeSourceKey, LocalIncludesAreFollowedOnceEach) {
  fs::path dir = testing::make_temp_dir("inc");
  write_text(dir / "a.h", "#include \"sub/b.h\"\nint a;\n");
  write_text(dir / "sub" / "b.h", "  #  include \"../a.h\"\n#include \"c.h\"\nint b;\n");
  write_text(dir / "sub" / "c.h", "int c;\n");
  const std::string text = "#include \"kgate/kernel.h\"\n#include <vector>\n#include \"a.h\"\n"
                           "#include \"missing.h\"\n";
  const std::string key = local_includes(dir.string(), text);
  // a.h, then b.h (found beside a.h), then c.h (beside b.h); the cycle back to a.h, the
  // ABI header, <vector> and the missing file add nothing.
  const auto pos_a = key.find("int a;"), pos_b = key.find("int b;"), pos_c = key.find("int c;");
  ASSERT_NE(pos_a, std::string::npos);
  ASSERT_NE(pos_b, std::string::npos);
  ASSERT_NE(pos_c, std::string::npos);
  EXPECT_LT(pos_a, pos_b);
  EXPECT_LT(pos_b, pos_c);
  EXPECT_EQ(key.find("int a;", pos_a + 1), std::string::npos);
  EXPECT_EQ(local_includes(dir.string(), "int x;\n"), "");
  fs::remove_all(dir);
}

TEST(NativeHostCompiler, EditingAnIncludedHeaderRebuilds) {
  // A persistent runner cache must not hand back an object built from an older header.
  std::string cache = testing::make_temp_dir("hc");
  fs::path src = testing::make_temp_dir("hsrc");
  write_text(src / "value.h", "#define VALUE 3\n");
  HostCompiler cc;
  auto req = request(cache, "#include \"value.h\"\n" + kOk, {});
  req.source_dir = src.string();
  auto first = cc.compile(req);
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(cc.compile(req).cache_hit);
  write_text(src / "value.h", "#define VALUE 4\n");
  auto edited = cc.compile(req);
  ASSERT_TRUE(edited.ok) << edited.log;
  EXPECT_FALSE(edited.cache_hit);
  EXPECT_NE(edited.so_path, first.so_path);
  fs::remove_all(cache);
  fs::remove_all(src);
}

TEST(NativeSourceKey, KgateHeadersAreEveryFileUnderKgateSortedByName) {
  fs::path inc = testing::make_temp_dir("kinc");
  EXPECT_EQ(kgate_headers(inc.string()), "");  // no kgate/ folder
  write_text(inc / "kgate" / "starter_host.h", "int host;\n");
  write_text(inc / "kgate" / "kernel.h", "int abi;\n");
  write_text(inc / "kgate" / "sub" / "x.cuh", "int x;\n");
  write_text(inc / "other" / "ignored.h", "int ignored;\n");  // outside kgate/
  const std::string key = kgate_headers(inc.string());
  using namespace std::string_literals;
  EXPECT_EQ(key, "kgate/kernel.h\0int abi;\n\0"s
                 "kgate/starter_host.h\0int host;\n\0"s
                 "kgate/sub/x.cuh\0int x;\n\0"s);
  // A second header's bytes, and its name, are part of it.
  write_text(inc / "kgate" / "starter_host.h", "int host2;\n");
  EXPECT_NE(kgate_headers(inc.string()), key);
  write_text(inc / "kgate" / "starter_host.h", "int host;\n");
  EXPECT_EQ(kgate_headers(inc.string()), key);
  fs::rename(inc / "kgate" / "starter_host.h", inc / "kgate" / "starter_host2.h");
  EXPECT_NE(kgate_headers(inc.string()), key);
  fs::remove_all(inc);
}

// KGATE_INCLUDE_DIR set for one scope, restored after.
class ScopedIncludeDir {
 public:
  explicit ScopedIncludeDir(const std::string& dir) {
    if (const char* e = std::getenv("KGATE_INCLUDE_DIR")) old_ = e;
    ::setenv("KGATE_INCLUDE_DIR", dir.c_str(), 1);
  }
  ~ScopedIncludeDir() {
    if (old_) ::setenv("KGATE_INCLUDE_DIR", old_->c_str(), 1);
    else ::unsetenv("KGATE_INCLUDE_DIR");
  }

 private:
  std::optional<std::string> old_;
};

TEST(NativeHostCompiler, EditingASecondKgateHeaderMissesTheCache) {
  // A shared starter helper (kgate/starter_host.h) edited under a persistent cache: the
  // candidate must be rebuilt, even one that does not include the edited header.
  fs::path inc = testing::make_temp_dir("kinc");
  fs::create_directories(inc / "kgate");
  fs::copy_file(fs::path(HostCompiler::include_dir()) / "kgate" / "kernel.h", inc / "kgate" / "kernel.h");
  write_text(inc / "kgate" / "helper.h", "#define HELPER 1\n");
  std::string cache = testing::make_temp_dir("hc");
  {
    ScopedIncludeDir scoped(inc.string());
    HostCompiler cc;
    auto first = cc.compile(request(cache, kOk));
    ASSERT_TRUE(first.ok) << first.log;
    EXPECT_FALSE(first.cache_hit);
    EXPECT_TRUE(cc.compile(request(cache, kOk)).cache_hit);
    write_text(inc / "kgate" / "helper.h", "#define HELPER 2\n");
    auto edited = cc.compile(request(cache, kOk));
    ASSERT_TRUE(edited.ok) << edited.log;
    EXPECT_FALSE(edited.cache_hit);
    EXPECT_NE(edited.so_path, first.so_path);
    write_text(inc / "kgate" / "another.h", "\n");  // a new header counts too
    auto added = cc.compile(request(cache, kOk));
    ASSERT_TRUE(added.ok) << added.log;
    EXPECT_FALSE(added.cache_hit);
  }
  fs::remove_all(cache);
  fs::remove_all(inc);
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
