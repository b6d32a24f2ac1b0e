#include "native/cuda/cuda_compiler.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "core/file_io.h"
#include "core/paths.h"
#include "native/compile_cache.h"
#include "native/cuda/subprocess.h"
#include "native/source_key.h"

#ifndef KGATE_NVCC
#define KGATE_NVCC "nvcc"
#endif

namespace kgate::native::cuda {
namespace fs = std::filesystem;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : fallback;
}

// Loads `path` and finds kgate_run. Returns "" on success, else why not.
std::string load_module(const std::string& path, std::shared_ptr<Module>* module) {
  seal_before_loading();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    return std::string("dlopen failed: ") + (e != nullptr ? e : "unknown error");
  }
  auto entry = reinterpret_cast<kgate_run_fn>(dlsym(handle, "kgate_run"));
  if (entry == nullptr) {
    dlclose(handle);
    return "the candidate does not export extern \"C\" int kgate_run(const kgate_tensor*, "
           "int32_t, kgate_tensor*, int32_t, void*)";
  }
  *module = std::make_shared<CudaModule>(handle, entry, path);
  return "";
}

}  // namespace

std::string check_define_name(const std::string& name) {
  if (name.empty()) return "empty macro name";
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c == '_') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return "macro name '" + name + "' is not a C identifier";
  }
  return "";
}

CompilerSettings CompilerSettings::from_environment(int cc_major, int cc_minor) {
  CompilerSettings s;
  s.nvcc = env_or("KGATE_NVCC", KGATE_NVCC);
  s.include_dir = paths::include_dir();  // $KGATE_INCLUDE_DIR, the install prefix, or the source tree
  s.arch = std::to_string(cc_major) + std::to_string(cc_minor);
  return s;
}

CudaCompiler::CudaCompiler(CompilerSettings settings) : settings_(std::move(settings)) {}

const std::string& CudaCompiler::nvcc_version() {
  if (nvcc_version_.empty()) {
    ProcessResult r = run_process({settings_.nvcc, "--version"});
    if (r.exit_code != 0)
      throw InfraError("'" + settings_.nvcc + " --version' failed (exit " +
                       std::to_string(r.exit_code) + "): " + r.output +
                       " (set KGATE_NVCC to the nvcc to use)");
    nvcc_version_ = r.output;
  }
  return nvcc_version_;
}

std::vector<std::string> CudaCompiler::arguments(
    const std::string& source_path, const std::map<std::string, std::string>& defines) const {
  const std::string& a = settings_.arch;
  std::vector<std::string> args = {settings_.nvcc, "-O3", "-std=c++17", "-shared",
                                   "-Xcompiler", "-fPIC",
                                   "-gencode", "arch=compute_" + a + ",code=sm_" + a,
                                   "-I" + settings_.include_dir};
  for (const auto& [name, value] : defines) args.push_back("-D" + name + "=" + value);
  args.push_back(source_path);
  args.push_back("-lcublas");
  // The candidate finds libcublas next to the nvcc that built it, without LD_LIBRARY_PATH.
  fs::path lib = fs::path(settings_.nvcc).parent_path().parent_path() / "lib64";
  if (fs::path(settings_.nvcc).has_parent_path())
    args.push_back("-Xlinker=-rpath," + lib.string());
  return args;
}

protocol::CompileResult CudaCompiler::compile(const std::string& source_path,
                                              const std::map<std::string, std::string>& defines,
                                              const std::string& cache_dir,
                                              std::shared_ptr<Module>* module) {
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
        .count();
  };
  protocol::CompileResult result;
  module->reset();

  core::ReadResult src = core::read_file(source_path);
  if (!src.ok()) {
    result.log = source_path + ": error: cannot read the candidate source";
    result.compile_ms = elapsed_ms();
    return result;
  }
  const std::string& source = src.bytes;
  for (const auto& [name, value] : defines) {
    std::string why = check_define_name(name);
    if (!why.empty()) {
      result.log = "bad define: " + why;
      result.compile_ms = elapsed_ms();
      return result;
    }
  }
  if (!core::read_file(settings_.include_dir + "/kgate/kernel.h").ok())
    throw InfraError("cannot read " + settings_.include_dir +
                     "/kgate/kernel.h (set KGATE_INCLUDE_DIR to kgate's harness/include)");

  // Everything that decides the binary goes into the key. The source path is not part of
  // it (the same text under another name is the same binary); kgate's headers (every file
  // under kgate/: kernel.h and the starter helpers) and the headers the candidate includes
  // from beside itself are, by name and content. v2: every header under kgate/, not only
  // kernel.h.
  std::vector<std::string> args = arguments("<source>", defines);
  std::string key = "kgate-cuda-v2\n";
  for (const std::string& a : args) key += a + "\n";
  key += "arch=" + settings_.arch + "\n" + nvcc_version() + "\n";
  key += kgate_headers(settings_.include_dir) + "\n---\n" + source;
  key += "\n---\n" + local_includes(fs::path(source_path).parent_path().string(), source);
  std::string hash = core::git_blob_id(key);

  const CompileCache cache(cache_dir, "cuda");  // InfraError when it cannot be made
  std::error_code ec;
  fs::path so = cache.entry(hash, ".so");

  if (const fs::path hit = cache.find(hash, ".so"); !hit.empty()) {
    std::string why = load_module(hit.string(), module);
    if (why.empty()) {
      result.compiled = true;
      result.cache_hit = true;
      result.library = fs::absolute(hit).string();
      result.compile_ms = elapsed_ms();
      return result;
    }
    // A damaged cache entry: rebuild it (where this worker writes).
    fs::remove(so, ec);
  }

  fs::path tmp = cache.temp(hash, ".so");
  args = arguments(source_path, defines);
  args.push_back("-o");
  args.push_back(tmp.string());
  ProcessResult pr = run_process(args);
  result.log = pr.output;
  if (pr.exit_code != 0) {
    fs::remove(tmp, ec);
    if (result.log.empty()) result.log = "nvcc exited with " + std::to_string(pr.exit_code);
    result.compile_ms = elapsed_ms();
    return result;
  }
  // Atomic publish: concurrent runners building the same key both rename a whole file.
  if (std::string why = CompileCache::publish(tmp, so); !why.empty())
    throw InfraError("cannot publish " + so.string() + ": " + why);
  std::string why = load_module(so.string(), module);
  if (!why.empty()) {
    result.log += (result.log.empty() ? "" : "\n") + why;
    result.compile_ms = elapsed_ms();
    return result;
  }
  result.compiled = true;
  result.library = fs::absolute(so).string();
  result.compile_ms = elapsed_ms();
  return result;
}

}  // namespace kgate::native::cuda
