#pragma once
// Builds a CUDA candidate (.cu with host code that launches its kernels) into a shared
// object with nvcc, caches it by content hash and loads it with dlopen.
//
// NVRTC is not used for candidates: a candidate is host code plus kernels (launch
// configuration, cuBLAS calls, several kernels per call), which only a full compiler
// builds. See docs/cuda-backend.md.
#include <map>
#include <memory>
#include <string>

#include "native/backend.h"
#include "protocol/messages.h"

namespace kgate::native::cuda {

// A candidate shared object loaded into the runner. It stays loaded for the life of the
// process: unloading a library that registered kernels with its static CUDA runtime (and
// may hold cuBLAS handles in statics) is a known source of crashes at exit.
class CudaModule : public Module {
 public:
  CudaModule(void* handle, kgate_run_fn entry, std::string path)
      : handle_(handle), entry_(entry), path_(std::move(path)) {}
  kgate_run_fn entry() const override { return entry_; }
  const std::string& path() const { return path_; }

 private:
  void* handle_;
  kgate_run_fn entry_;
  std::string path_;
};

struct CompilerSettings {
  std::string nvcc;         // path of nvcc
  std::string include_dir;  // the directory holding kgate/kernel.h
  std::string arch;         // "90" for sm_90
  // Resolves nvcc ($KGATE_NVCC, else the toolkit found at build time) and the ABI header
  // ($KGATE_INCLUDE_DIR, else the source tree's harness/include).
  static CompilerSettings from_environment(int cc_major, int cc_minor);
};

class CudaCompiler {
 public:
  explicit CudaCompiler(CompilerSettings settings);

  protocol::CompileResult compile(const std::string& source_path,
                                  const std::map<std::string, std::string>& defines,
                                  const std::string& cache_dir, std::shared_ptr<Module>* module);

  // The nvcc arguments for one build (without the output path), exposed for tests/docs.
  std::vector<std::string> arguments(const std::string& source_path,
                                     const std::map<std::string, std::string>& defines) const;
  const CompilerSettings& settings() const { return settings_; }

 private:
  const std::string& nvcc_version();
  CompilerSettings settings_;
  std::string nvcc_version_;
};

// "" when the macro name is a C identifier, else why not.
std::string check_define_name(const std::string& name);

}  // namespace kgate::native::cuda
