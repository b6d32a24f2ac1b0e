#pragma once
// Ops for config tests, so expected messages do not depend on the built-in op library.
#include <string>
#include <vector>

#include "config/loader.h"
#include "ops/op.h"

namespace kgate::config::testing {

class FakeOp : public ops::Op {
 public:
  FakeOp(std::string name, std::vector<std::string> dims, bool even_only = false)
      : name_(std::move(name)), dims_(std::move(dims)), even_only_(even_only) {}
  std::string_view name() const override { return name_; }
  std::string_view summary() const override { return "fake op for config tests"; }
  std::vector<std::string> dims() const override { return dims_; }
  std::vector<ops::TensorDecl> inputs() const override { return {}; }
  std::vector<ops::TensorDecl> outputs() const override { return {}; }
  std::string check_dims(const ops::Dims& d) const override {
    if (even_only_)
      for (const auto& [k, v] : d)
        if (v % 2 != 0) return k + " must be even";
    return "";
  }
  std::vector<ops::HostTensor> reference_f64(const ops::Dims&,
                                             const std::vector<ops::HostTensor>&) const override {
    return {};
  }
  double flops(const ops::Dims&) const override { return 0; }
  ops::Tolerance default_tolerance(DType) const override { return {0.5, 0.25}; }

 private:
  std::string name_;
  std::vector<std::string> dims_;
  bool even_only_;
};

inline const OpCatalog& fake_ops() {
  static const FakeOp softmax("softmax", {"R", "C"});
  static const FakeOp rmsnorm("rmsnorm", {"R", "C"});
  static const FakeOp pairs("pairs", {"N"}, true);
  static const OpCatalog cat{
      [](std::string_view n) -> const ops::Op* {
        for (const ops::Op* op : {static_cast<const ops::Op*>(&softmax),
                                  static_cast<const ops::Op*>(&rmsnorm),
                                  static_cast<const ops::Op*>(&pairs)})
          if (op->name() == n) return op;
        return nullptr;
      },
      [] { return std::vector<std::string>{"pairs", "rmsnorm", "softmax"}; }};
  return cat;
}

inline std::string fixture(const std::string& rel) {
  return std::string(KGATE_TEST_DATA) + "/config/" + rel;
}

// The diagnostics reported for one file, as printed.
inline std::vector<std::string> lines_for(const Diagnostics& d, const std::string& file) {
  std::vector<std::string> out;
  for (const auto& x : d.items())
    if (x.loc.file == file) out.push_back(x.str());
  return out;
}

}  // namespace kgate::config::testing
