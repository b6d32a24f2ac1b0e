// CUDA pieces that CI checks without a GPU: every CUDA starter builds for sm_90 with the
// flags the backend uses, and the backend plugin fails cleanly where there is no driver.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "native/backend.h"

namespace fs = std::filesystem;

namespace {

std::string find_nvcc() {
  if (const char* e = std::getenv("KGATE_NVCC"); e != nullptr && fs::exists(e)) return e;
  if (const char* h = std::getenv("CUDA_HOME"); h != nullptr && fs::exists(fs::path(h) / "bin/nvcc"))
    return (fs::path(h) / "bin/nvcc").string();
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "";
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs a shell command, returns exit status and output.
int run(const std::string& cmd, std::string* out) {
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (f == nullptr) return -1;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, f) != nullptr) *out += buf;
  int st = pclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::vector<fs::path> cu_files(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(KGATE_SOURCE_DIR) / dir))
    if (e.path().extension() == ".cu") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}
std::vector<fs::path> starters() { return cu_files("kernelbench/native/starters"); }

// Builds each file into OUT/<stem>.so with the flags the backend uses
// (harness/native/cuda/cuda_compiler.cpp), two at a time (nvcc is slow, CI machines small).
// Returns (exit status, compiler output) per file.
std::vector<std::pair<int, std::string>> build_all(const std::string& nvcc, const std::vector<fs::path>& files,
                                                   const fs::path& out_dir) {
  fs::path lib64 = fs::path(nvcc).parent_path().parent_path() / "lib64";
  auto build = [&](const fs::path& src) {
    std::string out;
    std::string cmd = nvcc + " -O3 -std=c++17 -shared -Xcompiler -fPIC -gencode arch=compute_90,code=sm_90 -I" +
                      std::string(KGATE_SOURCE_DIR) + "/harness/include " + src.string() + " -lcublas -Xlinker=-rpath," +
                      lib64.string() + " -o " + (out_dir / (src.stem().string() + ".so")).string() + " 2>&1";
    int rc = run(cmd, &out);
    return std::make_pair(rc, out);
  };
  std::vector<std::pair<int, std::string>> results(files.size());
  for (std::size_t i = 0; i < files.size(); i += 2) {
    auto a = std::async(std::launch::async, build, files[i]);
    std::future<std::pair<int, std::string>> b;
    if (i + 1 < files.size()) b = std::async(std::launch::async, build, files[i + 1]);
    results[i] = a.get();
    if (b.valid()) results[i + 1] = b.get();
  }
  return results;
}

}  // namespace

TEST(CudaCompile, StartersDeclareTunablesWithDefaults) {
  std::vector<fs::path> files = starters();
  ASSERT_GE(files.size(), 9u);
  std::regex tune(R"(//\s*kgate:tune\s+([A-Za-z_][A-Za-z0-9_]*)=\[)");
  for (const fs::path& p : files) {
    std::string text = read(p);
    EXPECT_NE(text.find("extern \"C\" int kgate_run("), std::string::npos) << p;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), tune); it != std::sregex_iterator(); ++it) {
      std::string name = (*it)[1];
      EXPECT_NE(text.find("#ifndef " + name), std::string::npos)
          << p.filename() << ": tunable " << name << " has no #ifndef default";
    }
  }
}

TEST(CudaCompile, EveryStarterBuildsForSm90AndExportsTheEntry) {
  std::string nvcc = find_nvcc();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (set KGATE_NVCC)";
  fs::path out_dir = fs::temp_directory_path() / ("kgate-cuda-compile-" + std::to_string(getpid()));
  fs::create_directories(out_dir);
  std::vector<fs::path> files = starters();
  auto results = build_all(nvcc, files, out_dir);
  for (std::size_t i = 0; i < files.size(); ++i)
    EXPECT_EQ(results[i].first, 0) << files[i] << ":\n" << results[i].second;
  // The objects load without a GPU (the static CUDA runtime finds the driver lazily) and
  // export the ABI's one entry point.
  for (const fs::path& src : files) {
    fs::path so = out_dir / (src.stem().string() + ".so");
    if (!fs::exists(so)) continue;
    void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << so << ": " << dlerror();
    EXPECT_NE(dlsym(h, "kgate_run"), nullptr) << so;
    // Left loaded: unloading the static CUDA runtime's registrations is pointless here.
  }
  std::error_code ec;
  fs::remove_all(out_dir, ec);
}

// The CUDA gate matrix (tests/gpu/cuda_gates_test.cpp, run on a GPU) builds here: every
// fixture compiles for sm_90 except the one that must not, which fails with nvcc's message.
TEST(CudaCompile, GateMatrixFixturesBuild) {
  std::string nvcc = find_nvcc();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (set KGATE_NVCC)";
  fs::path out_dir = fs::temp_directory_path() / ("kgate-cuda-matrix-" + std::to_string(getpid()));
  fs::create_directories(out_dir);
  std::vector<fs::path> files = cu_files("tests/fixtures/candidates/softmax_cuda");
  ASSERT_GE(files.size(), 10u);
  auto results = build_all(nvcc, files, out_dir);
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (files[i].stem() == "compile_error") {
      EXPECT_NE(results[i].first, 0) << files[i] << " compiled";
      EXPECT_NE(results[i].second.find("undeclared_helper"), std::string::npos) << results[i].second;
    } else {
      EXPECT_EQ(results[i].first, 0) << files[i] << ":\n" << results[i].second;
    }
  }
  std::error_code ec;
  fs::remove_all(out_dir, ec);
}

// The native CUDA red-team corpus (tests/redteam/native_cuda, run through `kgate bench` on a
// GPU by gpu.redteam_native_cuda) builds here, and every case says what must happen to it:
// a GPU session must not be the first to find a case that does not compile or has no
// expectation.
TEST(CudaCompile, RedTeamCorpusBuildsAndEveryCaseStatesItsExpectation) {
  std::vector<fs::path> files = cu_files("tests/redteam/native_cuda");
  ASSERT_GE(files.size(), 20u);
  const fs::path dir = fs::path(KGATE_SOURCE_DIR) / "tests/redteam/native_cuda";
  int cheats = 0, unusual = 0;
  for (const fs::path& p : files) {
    if (p.stem() == "baseline") continue;
    std::string text = read(p);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(// expect: ([^\n]*))"))) << p << ": no '// expect:' line";
    std::string expect = m[1];
    if (expect == "pass") {
      ++unusual;
    } else {
      ++cheats;
      EXPECT_TRUE(std::regex_match(expect, std::regex(R"((static|correctness|oracle|performance) \| .+)")))
          << p.filename() << ": '" << expect << "'";
    }
    if (std::regex_search(text, m, std::regex(R"(// problem: ([^\n]*))"))) {
      EXPECT_TRUE(fs::exists(dir / std::string(m[1]))) << p.filename() << ": no problem file " << m[1];
    }
  }
  EXPECT_GE(cheats, 15);
  EXPECT_GE(unusual, 4);
  std::string nvcc = find_nvcc();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (set KGATE_NVCC)";
  fs::path out_dir = fs::temp_directory_path() / ("kgate-cuda-redteam-" + std::to_string(getpid()));
  fs::create_directories(out_dir);
  auto results = build_all(nvcc, files, out_dir);
  for (std::size_t i = 0; i < files.size(); ++i)
    EXPECT_EQ(results[i].first, 0) << files[i] << ":\n" << results[i].second;
  std::error_code ec;
  fs::remove_all(out_dir, ec);
}

TEST(CudaCompile, PluginWithoutDriverFailsCleanly) {
  fs::path plugin = fs::path(KGATE_BINARY_DIR) / kgate::native::kCudaPluginName;
  if (!fs::exists(plugin)) GTEST_SKIP() << plugin << " not built (no CUDA toolkit)";
  void* h = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    // No libcuda.so.1 on this machine: the loader says which library is missing, which is
    // what the runner shows the user.
    std::string err = dlerror();
    EXPECT_NE(err.find("libcuda.so.1"), std::string::npos) << err;
    return;
  }
  auto create = reinterpret_cast<kgate::native::CreateCudaBackendFn>(dlsym(h, kgate::native::kCudaPluginEntry));
  ASSERT_NE(create, nullptr) << "plugin does not export " << kgate::native::kCudaPluginEntry;
  std::string err;
  kgate::native::Backend* b = create(0, &err);
  if (b != nullptr) {
    // A machine with a GPU: the backend is real.
    EXPECT_EQ(b->name(), "cuda");
    delete b;
  } else {
    EXPECT_NE(err.find("cuda backend unavailable"), std::string::npos) << err;
  }
  // An index no machine has must fail with a message, never crash.
  err.clear();
  kgate::native::Backend* none = create(1 << 20, &err);
  EXPECT_EQ(none, nullptr);
  EXPECT_FALSE(err.empty());
  delete none;
}
