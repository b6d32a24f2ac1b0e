#pragma once
// A problem's own float64 reference (ProblemSpec.reference_source): a C++ file defining
//
//   template <typename T>
//   void kgate_reference(const kgate_tensor* in, int n_in, kgate_tensor* out, int n_out);
//
// compiled on the host with a generated wrapper that instantiates it for double. It
// replaces the op's built-in reference as the truth; the op still names the dims, inputs
// and outputs. Contract (docs/runner.md): float inputs arrive converted to KGATE_F64,
// integer inputs keep their dtype; outputs are KGATE_F64, zero-filled, row-major.
#include <memory>
#include <string>
#include <vector>

#include "kgate/kernel.h"
#include "native/host_compiler.h"
#include "ops/op.h"

namespace kgate::native {

class SharedObjectModule;

class UserReference {
 public:
  // Compiles and loads `source_path`. On failure returns null and sets *err (with the
  // compiler's log).
  static std::unique_ptr<UserReference> load(const std::string& source_path,
                                             const std::string& cache_dir,
                                             HostCompiler& compiler, std::string* err);
  std::vector<ops::HostTensor> compute(const ops::Op& op, const ops::Dims& dims,
                                       const std::vector<ops::HostTensor>& inputs) const;
  const std::string& path() const { return path_; }

 private:
  using Fn = int (*)(const kgate_tensor*, int, kgate_tensor*, int);
  std::string path_;
  std::shared_ptr<SharedObjectModule> so_;
  Fn fn_ = nullptr;
};

// The generated translation unit (exposed for tests and docs).
std::string user_reference_unit(const std::string& display_path, const std::string& source);

inline constexpr const char* kUserReferenceEntry = "kgate_reference_f64";

}  // namespace kgate::native
