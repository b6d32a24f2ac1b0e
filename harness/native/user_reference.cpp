#include "native/user_reference.h"

#include <filesystem>
#include <stdexcept>

#include "core/file_io.h"
#include "native/checker.h"
#include "native/host_backend.h"

namespace kgate::native {
namespace fs = std::filesystem;

std::string user_reference_unit(const std::string& display_path, const std::string& source) {
  std::string u = "#include \"kgate/kernel.h\"\n";
  u += "#line 1 \"" + display_path + "\"\n";
  u += source;
  u += "\n#line 1 \"<kgate reference wrapper>\"\n";
  u += "extern \"C\" int kgate_reference_f64(const kgate_tensor* in, int n_in, kgate_tensor* out,"
       " int n_out) {\n"
       "  kgate_reference<double>(in, n_in, out, n_out);\n"
       "  return 0;\n"
       "}\n";
  return u;
}

std::unique_ptr<UserReference> UserReference::load(const std::string& source_path,
                                                   const std::string& cache_dir,
                                                   HostCompiler& compiler, std::string* err) {
  core::ReadResult src = core::read_file(source_path);
  if (!src.ok()) {
    *err = "cannot read reference_source " + source_path;
    return nullptr;
  }
  std::string display = fs::absolute(source_path).lexically_normal().string();
  HostCompileRequest req;
  req.text = user_reference_unit(display, src.bytes);
  req.source_dir = fs::path(display).parent_path().string();
  req.cache_dir = cache_dir;
  HostCompileOutput out = compiler.compile(req);
  if (!out.ok) {
    *err = "reference_source " + display + " does not compile:\n" + out.log;
    return nullptr;
  }
  std::string lerr;
  auto so = SharedObjectModule::load(out.so_path, kUserReferenceEntry, &lerr);
  if (!so) {
    *err = "reference_source " + display + ": " + lerr;
    return nullptr;
  }
  auto ref = std::unique_ptr<UserReference>(new UserReference());
  ref->path_ = display;
  ref->fn_ = reinterpret_cast<Fn>(so->symbol());
  ref->so_ = std::move(so);
  return ref;
}

std::vector<ops::HostTensor> UserReference::compute(
    const ops::Op& op, const ops::Dims& dims, const std::vector<ops::HostTensor>& inputs) const {
  std::vector<ops::HostTensor> in64;
  for (const auto& t : inputs) {
    if (!is_float(t.dtype) || t.dtype == DType::kF64) {
      in64.push_back(t);
      continue;
    }
    auto c = ops::HostTensor::make(DType::kF64, t.shape);
    for (int64_t i = 0; i < t.numel(); ++i) c.set(i, t.get(i));
    in64.push_back(std::move(c));
  }
  std::vector<ops::HostTensor> out;
  for (const auto& d : op.outputs()) {
    out.push_back(ops::HostTensor::make(DType::kF64, op.shape_of(d, dims)));
  }
  std::vector<kgate_tensor> in_desc, out_desc;
  for (auto& t : in64) in_desc.push_back(describe(t, t.bytes.data()));
  for (auto& t : out) out_desc.push_back(describe(t, t.bytes.data()));
  int rc = fn_(in_desc.data(), static_cast<int>(in_desc.size()), out_desc.data(),
               static_cast<int>(out_desc.size()));
  if (rc != 0) throw std::runtime_error("reference_source " + path_ + " failed");
  return out;
}

}  // namespace kgate::native
