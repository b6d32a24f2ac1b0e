// KernelBench problems as the gates see them: a .py file with a PyTorch `Model`, run by
// the Python worker; no op, no shapes (get_inputs() decides them).
#include <filesystem>

#include "config/types.h"

namespace kgate::config {

NativeProblem kernelbench_problem(const std::string& id, const std::string& py_path,
                                  const std::string& baseline_mode) {
  namespace fs = std::filesystem;
  NativeProblem p;
  p.kind = "kernelbench";
  std::error_code ec;
  fs::path abs = fs::absolute(py_path, ec);
  p.path = ec ? py_path : abs.lexically_normal().string();
  p.id = id.empty() ? fs::path(py_path).stem().string() : id;
  p.title = fs::path(py_path).stem().string();
  p.kernelbench_baseline = baseline_mode.empty() ? "eager" : baseline_mode;
  p.dtypes = {DType::kF32};
  p.bench_dtype = DType::kF32;
  p.loc = SourceLoc{p.path, 1, 1};
  return p;
}

}  // namespace kgate::config
