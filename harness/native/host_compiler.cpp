#include "native/host_compiler.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/file_io.h"
#include "core/paths.h"
#include "core/subprocess.h"
#include "native/compile_cache.h"
#include "native/source_key.h"

namespace kgate::native {
namespace fs = std::filesystem;

namespace {

// Bump when the translation-unit layout or flags change meaning, so old objects are unused.
constexpr const char* kCacheKeyVersion = "kgate-host-cc-v2";  // v2: every header under kgate/

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

// "" when written, else the system's reason ("No space left on device": a full disk must
// read as one in the compile log, not as a bare "cannot write").
std::string write_file(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return std::strerror(errno);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "short write";
      ::close(fd);
      return why;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) return std::strerror(errno);
  return "";
}

}  // namespace

std::string trim_log(const std::string& log, std::size_t max_bytes) {
  if (log.size() <= max_bytes) return log;
  std::size_t head = max_bytes * 3 / 4;
  std::size_t tail = max_bytes - head;
  return log.substr(0, head) + "\n[... " + std::to_string(log.size() - head - tail) +
         " bytes of compiler output omitted ...]\n" + log.substr(log.size() - tail);
}

int run_capture(const std::vector<std::string>& argv, std::string* output) {
  output->clear();
  core::SpawnSpec spec;
  spec.argv = argv;
  spec.stdin_mode = core::SpawnSpec::Stdin::kNull;
  spec.stdout_mode = core::SpawnSpec::Output::kPipe;
  spec.stderr_mode = core::SpawnSpec::Output::kMerge;
  // The compiler stays in the runner's process group: a deadline that kills the worker's
  // group takes the compile down with it.
  spec.group = core::SpawnSpec::Group::kInherit;
  try {
    core::RunResult r = core::run(spec);
    *output = std::move(r.out);
    return r.status.shell_code();
  } catch (const InfraError& e) {
    *output = e.what();
    return -1;
  }
}

HostCompiler::HostCompiler() {
  const char* env = std::getenv("CXX");
  cxx_ = split_ws(env && *env ? env : "c++");
  if (cxx_.empty()) cxx_ = {"c++"};
  std::vector<std::string> argv = cxx_;
  argv.push_back("--version");
  std::string out;
  int rc = run_capture(argv, &out);
  version_ = rc == 0 ? out.substr(0, out.find('\n')) : "unknown (" + out + ")";
}

std::string HostCompiler::include_dir() {
  return paths::include_dir();  // $KGATE_INCLUDE_DIR, the install prefix, or the source tree
}

std::vector<std::string> HostCompiler::base_flags(const std::string& source_dir) const {
  std::vector<std::string> f = {"-O3",    "-march=native", "-std=c++17",
                                "-shared", "-fPIC",        "-Wl,-z,defs",
                                "-I" + include_dir()};
  if (!source_dir.empty()) {
    f.push_back("-iquote");
    f.push_back(source_dir);
  }
  return f;
}

HostCompileOutput HostCompiler::compile(const HostCompileRequest& req) {
  auto t0 = std::chrono::steady_clock::now();
  HostCompileOutput out;
  auto finish = [&]() {
    out.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    out.log = trim_log(out.log);
    return out;
  };

  std::string inc = include_dir();
  if (inc.empty() || !fs::exists(fs::path(inc) / "kgate" / "kernel.h")) {
    out.log = "kgate/kernel.h not found under '" + inc +
              "' (set KGATE_INCLUDE_DIR to the directory holding kgate/kernel.h)";
    return finish();
  }

  std::vector<std::string> flags = base_flags(req.source_dir);
  for (const auto& [name, value] : req.defines) flags.push_back("-D" + name + "=" + value);

  // The key covers everything that changes the object: the text, the flags (defines
  // included), the compiler, and kgate's headers (kernel.h and the starter helpers: every
  // file under kgate/, by name and content).
  std::string key = kCacheKeyVersion;
  key += '\0';
  for (const auto& c : cxx_) key += c + '\0';
  key += version_ + '\0';
  for (const auto& f : flags) key += f + '\0';
  key += kgate_headers(inc) + '\0';
  key += req.text;
  key += '\0' + local_includes(req.source_dir, req.text);
  std::string hash = core::git_blob_id(key);

  const CompileCache cache(req.cache_dir, "host");  // InfraError when it cannot be made
  std::error_code ec;
  if (const fs::path hit = cache.find(hash, ".so"); !hit.empty()) {
    out.so_path = hit.string();
    out.ok = true;
    out.cache_hit = true;
    out.log = core::read_file(fs::path(hit).replace_extension(".log").string()).bytes;
    return finish();
  }
  fs::path so = cache.entry(hash, ".so");
  out.so_path = so.string();

  fs::path src_tmp = cache.temp(hash, ".cpp");
  fs::path so_tmp = cache.temp(hash, ".so");
  if (const std::string why = write_file(src_tmp.string(), req.text); !why.empty()) {
    out.log = "cannot write " + src_tmp.string() + ": " + why;
    fs::remove(src_tmp, ec);
    return finish();
  }
  std::vector<std::string> argv = cxx_;
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("-o");
  argv.push_back(so_tmp.string());
  // -x c++ so the temp suffix does not hide the language from the driver.
  argv.push_back("-x");
  argv.push_back("c++");
  argv.push_back(src_tmp.string());

  std::string log;
  int rc = run_capture(argv, &log);
  if (rc != 0 || !fs::exists(so_tmp)) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    out.log = log + (log.empty() || log.back() == '\n' ? "" : "\n") + "[kgate] compiler exited " +
              std::to_string(rc) + ": " + cmd + "\n";
    fs::remove(src_tmp, ec);
    fs::remove(so_tmp, ec);
    out.so_path.clear();
    return finish();
  }
  // Log and source first, the object last: a present .so means a complete entry.
  const fs::path log_tmp = cache.temp(hash, ".log");
  if (write_file(log_tmp.string(), log).empty()) (void)CompileCache::publish(log_tmp, cache.entry(hash, ".log"));
  else fs::remove(log_tmp, ec);
  (void)CompileCache::publish(src_tmp, cache.entry(hash, ".cpp"));
  if (const std::string why = CompileCache::publish(so_tmp, so); !why.empty()) {
    out.log = log + "[kgate] cannot move the object into the cache: " + why + "\n";
    out.so_path.clear();
    return finish();
  }
  out.ok = true;
  out.log = log;
  return finish();
}

}  // namespace kgate::native
