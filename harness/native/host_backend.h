#pragma once
// The host backend: candidates are C++ compiled by the system compiler into shared
// objects and called on the CPU; timing is steady_clock around each call.
#include <memory>
#include <string>

#include "native/backend.h"
#include "native/host_compiler.h"

namespace kgate::native {

// A shared object loaded with dlopen; closes it when the last slot lets go.
class SharedObjectModule : public Module {
 public:
  // Loads `path` and resolves `symbol`. On failure returns null and sets *err.
  static std::shared_ptr<SharedObjectModule> load(const std::string& path,
                                                  const std::string& symbol, std::string* err);
  ~SharedObjectModule() override;
  kgate_run_fn entry() const override { return reinterpret_cast<kgate_run_fn>(fn_); }
  void* symbol() const { return fn_; }

 private:
  SharedObjectModule(void* handle, void* fn) : handle_(handle), fn_(fn) {}
  void* handle_;
  void* fn_;
};

// Best-of-N memcpy bandwidth (read + write bytes per second) over `bytes` buffers.
double measure_host_copy_gbps(std::size_t bytes, int reps);

class HostBackend : public Backend {
 public:
  std::string name() const override { return "host"; }
  protocol::DeviceInfo device_info() override;
  protocol::CompileResult compile(const std::string& source_path,
                                  const std::map<std::string, std::string>& defines,
                                  const std::string& cache_dir,
                                  std::shared_ptr<Module>* module) override;
  void* alloc(std::size_t bytes) override;
  void release(void* p) override;
  void to_device(void* dst, const void* src, std::size_t bytes) override;
  void to_host(void* dst, const void* src, std::size_t bytes) override;
  void zero(void* dst, std::size_t bytes) override;
  void fill(void* dst, const std::vector<unsigned char>& pattern, std::size_t bytes) override;
  void copy(void* dst, const void* src, std::size_t bytes) override;
  bool equal(const void* a, const void* b, std::size_t bytes) override;
  int run(const Module& m, const std::vector<kgate_tensor>& inputs,
          std::vector<kgate_tensor>& outputs) override;
  protocol::TimeResult time(std::vector<TimedCall>& calls, const protocol::TimeParams& params,
                            RoundAudit* audit) override;

 private:
  HostCompiler compiler_;
};

}  // namespace kgate::native
