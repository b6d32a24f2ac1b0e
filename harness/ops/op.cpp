// Op defaults shared by every built-in op: dims checks, deterministic input generation,
// byte counts and tolerances.
#include "ops/op.h"
#include "ops/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <cmath>
#include <numbers>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/rng.h"

namespace kgate::ops {

std::string_view to_string(Distribution d) {
  switch (d) {
    case Distribution::kNormal: return "normal";
    case Distribution::kUniform01: return "uniform01";
    case Distribution::kSigned: return "signed";
    case Distribution::kLarge: return "large";
    case Distribution::kTiny: return "tiny";
    case Distribution::kMixed: return "mixed";
  }
  return "?";
}

std::optional<Distribution> parse_distribution(std::string_view s) {
  for (Distribution d : {Distribution::kNormal, Distribution::kUniform01, Distribution::kSigned,
                         Distribution::kLarge, Distribution::kTiny, Distribution::kMixed}) {
    if (s == to_string(d)) return d;
  }
  if (s == "uniform" || s == "rand") return Distribution::kUniform01;
  if (s == "randn") return Distribution::kNormal;
  return std::nullopt;
}

std::vector<int64_t> Op::shape_of(const TensorDecl& t, const Dims& dims) const {
  std::vector<int64_t> shape;
  shape.reserve(t.shape.size());
  for (const std::string& d : t.shape) {
    // "D/2": a dimension divided by a constant (rotary tables are [S, D/2]).
    const std::size_t slash = d.find('/');
    const std::string key = d.substr(0, slash);
    auto it = dims.find(key);
    int64_t v = it == dims.end() ? 0 : it->second;
    if (slash != std::string::npos) {
      const int64_t div = std::stoll(d.substr(slash + 1));
      v = div > 0 ? v / div : 0;
    }
    shape.push_back(v);
  }
  return shape;
}

std::string Op::check_dims(const Dims& dims) const {
  for (const std::string& d : this->dims()) {
    auto it = dims.find(d);
    if (it == dims.end()) return "missing dimension " + d;
    if (it->second < 1) return d + " must be >= 1 (got " + std::to_string(it->second) + ")";
  }
  for (const auto& [k, v] : dims) {
    auto names = this->dims();
    if (std::find(names.begin(), names.end(), k) == names.end()) {
      return "unknown dimension " + k + " for op " + std::string(name());
    }
    (void)v;
  }
  return "";
}

double Op::large_scale(const Dims& /*dims*/, DType dtype) const {
  return dtype == DType::kF16 ? 60000.0 : 1e30;
}

int64_t Op::integer_bound(const TensorDecl& /*t*/, const Dims& /*dims*/) const { return 1 << 16; }

namespace {

std::atomic<int> g_input_threads{0};

// Runs body(c) for every c in [0, n) on up to `threads` threads (the caller's included).
template <typename Body>
void for_each_chunk(int64_t n, int threads, Body&& body) {
  threads = static_cast<int>(std::min<int64_t>(n, std::max(1, threads)));
  if (threads <= 1) {
    for (int64_t c = 0; c < n; ++c) body(c);
    return;
  }
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t c = next.fetch_add(1); c < n; c = next.fetch_add(1)) body(c);
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads - 1));
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
}

}  // namespace

void parallel_chunks(int64_t n, int threads, const std::function<void(int64_t)>& body) {
  for_each_chunk(n, threads, body);
}

void set_input_threads(int n) { g_input_threads.store(std::max(0, n)); }

int input_threads() {
  int n = g_input_threads.load();
  if (n > 0) return n;
  unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hw, 1u, 64u));
}

std::vector<HostTensor> Op::make_inputs(const Dims& dims, DType dtype, uint64_t seed,
                                        Distribution dist) const {
  std::vector<HostTensor> out;
  const std::vector<TensorDecl> decls = inputs();
  const double big = large_scale(dims, dtype);
  for (std::size_t i = 0; i < decls.size(); ++i) {
    const TensorDecl& t = decls[i];
    const DType dt = t.fixed_dtype.value_or(dtype);
    HostTensor h = HostTensor::make(dt, shape_of(t, dims));
    const int64_t n = h.numel();
    const int64_t chunks = (n + kInputChunk - 1) / kInputChunk;
    // Small tensors stay on the calling thread: starting threads costs more than drawing.
    const int threads = n >= 4 * kInputChunk ? input_threads() : 1;
    // Distinct elements of one tensor are distinct bytes: chunks write without locks.
    auto stream = [&](int64_t c) { return core::Rng(seed, (static_cast<uint64_t>(i) << 32) | static_cast<uint64_t>(c)); };
    if (!is_float(dt)) {
      const uint64_t bound = static_cast<uint64_t>(std::max<int64_t>(1, integer_bound(t, dims)));
      for_each_chunk(chunks, threads, [&](int64_t c) {
        core::Rng rng = stream(c);
        const int64_t end = std::min(n, (c + 1) * kInputChunk);
        for (int64_t e = c * kInputChunk; e < end; ++e) h.set(e, static_cast<double>(rng.below(bound)));
      });
      out.push_back(std::move(h));
      continue;
    }
    // Rows are the last dimension: kMixed alternates its scale from one row to the next.
    const int64_t row = h.shape.empty() ? 1 : std::max<int64_t>(1, h.shape.back());
    const double clamp = std::min(4 * big, dtype_max(dt));
    const double mixed_hi = std::min(1e3, big);
    for_each_chunk(chunks, threads, [&](int64_t c) {
      core::Rng rng = stream(c);
      const int64_t end = std::min(n, (c + 1) * kInputChunk);
      for (int64_t e = c * kInputChunk; e < end; ++e) {
        double v = 0;
        switch (dist) {
          case Distribution::kNormal: v = rng.normal(); break;
          case Distribution::kUniform01: v = rng.uniform(); break;
          case Distribution::kSigned: v = 2 * rng.uniform() - 1; break;
          case Distribution::kLarge: v = std::clamp(rng.normal() * big, -clamp, clamp); break;
          case Distribution::kTiny: v = rng.normal() * 1e-6; break;
          case Distribution::kMixed: v = rng.normal() * (((e / row) % 2 == 0) ? mixed_hi : 1e-3); break;
        }
        h.set(e, v);
      }
    });
    out.push_back(std::move(h));
  }
  return out;
}

namespace {

// Rows [a, b) of a row-major tensor (its first dimension).
HostTensor slice_rows(const HostTensor& t, int64_t a, int64_t b) {
  std::vector<int64_t> shape = t.shape;
  const int64_t rows = shape.front();
  const std::size_t row_bytes = rows == 0 ? 0 : t.bytes.size() / static_cast<std::size_t>(rows);
  shape.front() = b - a;
  HostTensor s = HostTensor::make(t.dtype, shape);
  std::copy(t.bytes.begin() + static_cast<std::ptrdiff_t>(a * static_cast<int64_t>(row_bytes)),
            t.bytes.begin() + static_cast<std::ptrdiff_t>(b * static_cast<int64_t>(row_bytes)), s.bytes.begin());
  return s;
}

}  // namespace

std::vector<HostTensor> reference_f64_threaded(const Op& op, const Dims& dims,
                                               const std::vector<HostTensor>& inputs) {
  const std::string d = op.independent_dim();
  auto it = dims.find(d);
  int64_t elements = 0;
  for (const auto& t : inputs) elements += t.numel();
  const int threads = input_threads();
  if (d.empty() || it == dims.end() || it->second < 2 || threads <= 1 || elements < (int64_t{1} << 20))
    return op.reference_f64(dims, inputs);
  const std::vector<TensorDecl> in_decls = op.inputs(), out_decls = op.outputs();
  auto leads = [&](const TensorDecl& t) { return !t.shape.empty() && t.shape.front() == d; };
  auto has = [&](const TensorDecl& t) { return std::find(t.shape.begin(), t.shape.end(), d) != t.shape.end(); };
  if (in_decls.size() != inputs.size()) return op.reference_f64(dims, inputs);
  for (const auto& t : in_decls)
    if (has(t) && !leads(t)) return op.reference_f64(dims, inputs);
  for (const auto& t : out_decls)
    if (!leads(t)) return op.reference_f64(dims, inputs);

  const int64_t rows = it->second;
  const int parts = static_cast<int>(std::min<int64_t>(rows, threads));
  std::vector<std::vector<HostTensor>> results(static_cast<std::size_t>(parts));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(parts));
  for_each_chunk(parts, parts, [&](int64_t k) {
    try {
      const int64_t a = rows * k / parts, b = rows * (k + 1) / parts;
      Dims sub = dims;
      sub[d] = b - a;
      std::vector<HostTensor> part;
      part.reserve(inputs.size());
      for (std::size_t i = 0; i < inputs.size(); ++i)
        part.push_back(leads(in_decls[i]) ? slice_rows(inputs[i], a, b) : inputs[i]);
      results[static_cast<std::size_t>(k)] = op.reference_f64(sub, part);
    } catch (...) {
      errors[static_cast<std::size_t>(k)] = std::current_exception();
    }
  });
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  // Concatenate each output's slices along its first dimension.
  std::vector<HostTensor> out;
  for (std::size_t j = 0; j < results.front().size(); ++j) {
    std::vector<int64_t> shape = results.front()[j].shape;
    shape.front() = rows;
    HostTensor t = HostTensor::make(results.front()[j].dtype, shape);
    auto dst = t.bytes.begin();
    for (const auto& r : results) dst = std::copy(r[j].bytes.begin(), r[j].bytes.end(), dst);
    out.push_back(std::move(t));
  }
  return out;
}

double Op::min_bytes(const Dims& dims, DType dtype) const {
  double bytes = 0;
  auto add = [&](const std::vector<TensorDecl>& decls) {
    for (const TensorDecl& t : decls) {
      double n = 1;
      for (int64_t s : shape_of(t, dims)) n *= static_cast<double>(s);
      bytes += n * static_cast<double>(dtype_size(t.fixed_dtype.value_or(dtype)));
    }
  };
  add(inputs());
  add(outputs());
  return bytes;
}

Tolerance Op::tolerance_at(DType dtype, const Dims& /*dims*/) const { return default_tolerance(dtype); }

Tolerance Op::default_tolerance(DType dtype) const {
  // Output rounding alone costs up to one unit roundoff (f16 2^-11, bf16 2^-8); the
  // defaults leave about 4x that for float32 internal arithmetic.
  switch (dtype) {
    case DType::kF16: return {1e-3, 2e-3};
    case DType::kBF16: return {1e-2, 1.6e-2};
    case DType::kF32: return {1e-5, 1e-5};
    case DType::kF64: return {1e-12, 1e-12};
    default: return {0, 0};
  }
}

namespace {

std::string torch_dtype(DType d) {
  switch (d) {
    case DType::kF16: return "torch.float16";
    case DType::kBF16: return "torch.bfloat16";
    case DType::kF32: return "torch.float32";
    case DType::kF64: return "torch.float64";
    case DType::kI32: return "torch.int32";
    case DType::kI64: return "torch.int64";
  }
  return "?";
}

std::string py_shape(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

std::string torch_form_module(const Op& op, const Dims& dims, DType dtype, const std::string& title) {
  const std::string form = op.torch_form();
  if (form.empty()) throw UsageError("op '" + std::string(op.name()) + "' has no PyTorch form");
  std::string args, draws;
  for (const TensorDecl& t : op.inputs()) {
    args += ", " + t.name;
    const std::string shape = py_shape(op.shape_of(t, dims));
    draws += "        ";
    if (t.fixed_dtype) {
      draws += "torch.randint(0, " + std::to_string(op.integer_bound(t, dims)) + ", " + shape +
               ", dtype=" + torch_dtype(*t.fixed_dtype) + "),\n";
    } else {
      draws += "torch.randn(" + shape + ", dtype=" + torch_dtype(dtype) + "),\n";
    }
  }
  std::string out;
  for (std::size_t p = 0, q; p < title.size(); p = q + 1) {
    q = title.find('\n', p);
    if (q == std::string::npos) q = title.size();
    out += "# " + title.substr(p, q - p) + "\n";
  }
  return out +
         "import torch\n"
         "import torch.nn as nn\n"
         "import torch.nn.functional as F\n\n\n"
         "class Model(nn.Module):\n"
         "    def forward(self" + args + "):\n"
         "        return " + form + "\n\n\n"
         "def get_inputs():\n"
         "    return [\n" + draws + "    ]\n\n\n"
         "def get_init_inputs():\n"
         "    return []\n";
}

}  // namespace kgate::ops
