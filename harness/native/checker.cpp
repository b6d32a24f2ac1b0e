#include "native/checker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "native/device_buffer.h"
#include "ops/parallel.h"
#include "native/user_reference.h"

namespace kgate::native {

namespace {

DType output_dtype(const ops::TensorDecl& d, DType case_dtype) {
  return d.fixed_dtype ? *d.fixed_dtype : case_dtype;
}

template <typename T>
std::vector<unsigned char> bytes_of(T v) {
  std::vector<unsigned char> b(sizeof v);
  std::memcpy(b.data(), &v, sizeof v);
  return b;
}

}  // namespace

std::size_t CaseData::bytes() const {
  std::size_t n = 0;
  for (const auto& t : inputs) n += t.bytes.size();
  for (const auto& t : truth) n += t.bytes.size();
  return n;
}

std::string case_key(const protocol::CheckCase& c) {
  std::ostringstream k;
  k << c.seed << '/';
  for (const auto& [name, v] : c.dims) k << name << '=' << v << ',';
  k << '/' << c.dtype << '/' << c.dist;
  return k.str();
}

CaseData make_case_data(const ops::Op& op, const UserReference* ref,
                        const protocol::CheckCase& c, Backend* device) {
  auto dtype = parse_dtype(c.dtype);
  if (!dtype) throw BadCase("unknown dtype \"" + c.dtype + "\"");
  auto dist = ops::parse_distribution(c.dist);
  if (!dist) throw BadCase("unknown dist \"" + c.dist + "\"");
  for (const auto& d : op.dims()) {
    if (!c.dims.count(d)) throw BadCase("op " + std::string(op.name()) + " needs dim " + d);
  }
  if (std::string why = op.check_dims(c.dims); !why.empty()) {
    throw BadCase("op " + std::string(op.name()) + ": " + why);
  }
  CaseData data;
  data.dtype = *dtype;
  data.inputs = op.make_inputs(c.dims, *dtype, c.seed, *dist);
  if (ref) {
    data.truth = ref->compute(op, c.dims, data.inputs);
  } else {
    if (device != nullptr) data.truth = device->device_reference_f64(op, c.dims, data.inputs);
    if (data.truth.empty()) data.truth = ops::reference_f64_threaded(op, c.dims, data.inputs);
  }
  auto outs = op.outputs();
  if (data.truth.size() != outs.size()) {
    throw std::runtime_error("reference produced " + std::to_string(data.truth.size()) +
                             " outputs, op declares " + std::to_string(outs.size()));
  }
  return data;
}

kgate_tensor describe(const ops::HostTensor& t, void* data) {
  if (t.shape.size() > KGATE_MAX_DIMS) {
    throw std::runtime_error("tensor has " + std::to_string(t.shape.size()) +
                             " dims; the ABI allows " + std::to_string(KGATE_MAX_DIMS));
  }
  kgate_tensor d{};
  d.data = data;
  d.dtype = static_cast<kgate_dtype>(static_cast<int>(t.dtype));
  d.ndim = static_cast<int32_t>(t.shape.size());
  auto strides = t.strides();
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    d.shape[i] = t.shape[i];
    d.strides[i] = strides[i];
  }
  return d;
}

std::vector<unsigned char> poison_pattern(DType d) {
  switch (d) {
    case DType::kF16: return bytes_of<uint16_t>(0x7E5A);   // quiet NaN, payload 0x05A
    case DType::kBF16: return bytes_of<uint16_t>(0x7FDA);  // quiet NaN, payload 0x1A
    case DType::kF32: return bytes_of<uint32_t>(0x7FC4D1E5u);
    case DType::kF64: return bytes_of<uint64_t>(0x7FF8DEADBEEFCAFEull);
    case DType::kI32: return bytes_of<int32_t>(static_cast<int32_t>(0xDEADBEEFu));
    case DType::kI64: return bytes_of<int64_t>(static_cast<int64_t>(0xDEADBEEFDEADBEEFull));
  }
  return {};
}

std::size_t tensor_bytes(const kgate_tensor& t) {
  std::size_t n = 1;
  for (int32_t i = 0; i < t.ndim; ++i) n *= static_cast<std::size_t>(t.shape[i]);
  return n * dtype_size(static_cast<DType>(static_cast<int>(t.dtype)));
}

namespace {

// One chunk's share of compare_output; merged in chunk order, so the result does not
// depend on how many threads ran the chunks.
struct ChunkErrors {
  protocol::OutputError e;  // counts, maxima and the chunk's worst element
  double sum_d2 = 0, sum_w2 = 0;
  double worst_d = -1;
  bool worst_nonfinite = false;  // a NaN/Inf/unwritten element outranks any finite error
};

ChunkErrors compare_chunk(const ops::HostTensor& got, const ops::HostTensor& want,
                          const std::vector<unsigned char>& poison, double atol, double rtol,
                          int64_t begin, int64_t end) {
  ChunkErrors c;
  protocol::OutputError& e = c.e;
  const std::size_t esz = poison.size();
  for (int64_t i = begin; i < end; ++i) {
    const double g = got.get(i);
    const double w = want.get(i);
    const bool unwritten =
        std::memcmp(got.bytes.data() + static_cast<std::size_t>(i) * esz, poison.data(), esz) == 0 &&
        // An integer truth may legitimately equal the sentinel.
        !(!is_float(got.dtype) && g == w);
    if (!std::isfinite(w)) {
      ++e.truth_nonfinite;
      bool same = std::isnan(w) ? std::isnan(g) : g == w;
      if (!same || unwritten) ++e.over_tol;
      if (unwritten) ++e.unwritten;
      continue;
    }
    c.sum_w2 += w * w;
    if (unwritten || !std::isfinite(g)) {
      ++e.over_tol;
      std::string kind;
      if (unwritten) {
        ++e.unwritten;
        kind = "unwritten";
      } else if (std::isnan(g)) {
        ++e.nan;
        kind = "nan";
      } else {
        ++e.inf;
        kind = g > 0 ? "inf" : "-inf";
      }
      if (!c.worst_nonfinite) {
        c.worst_nonfinite = true;
        e.worst_index = i;
        e.worst_got = 0;
        e.worst_want = w;
        e.worst_kind = kind;
      }
      continue;
    }
    const double d = std::fabs(g - w);
    c.sum_d2 += d * d;
    if (d > e.max_abs_err) e.max_abs_err = d;
    if (w != 0) {
      double r = d / std::fabs(w);
      if (r > e.max_rel_err) e.max_rel_err = r;
    }
    if (d > atol + rtol * std::fabs(w)) ++e.over_tol;
    if (!c.worst_nonfinite && d > c.worst_d) {
      c.worst_d = d;
      e.worst_index = i;
      e.worst_got = g;
      e.worst_want = w;
      e.worst_kind = "finite";
    }
  }
  return c;
}

// Elements per chunk of compare_output (and the size under which it stays on one thread).
constexpr int64_t kCompareChunk = int64_t{1} << 16;
// Bytes of a known pattern after every buffer a checked candidate gets.
constexpr std::size_t kGuardBytes = 4096;

}  // namespace

protocol::OutputError compare_output(const std::string& name, const ops::HostTensor& got,
                                     const ops::HostTensor& want, double atol, double rtol) {
  protocol::OutputError e;
  e.name = name;
  e.shape_ok = got.shape == want.shape;
  if (!e.shape_ok) return e;
  const auto poison = poison_pattern(got.dtype);
  const int64_t n = got.numel();
  const int64_t chunks = std::max<int64_t>(1, (n + kCompareChunk - 1) / kCompareChunk);
  std::vector<ChunkErrors> parts(static_cast<std::size_t>(chunks));
  ops::parallel_chunks(chunks, n >= 4 * kCompareChunk ? ops::input_threads() : 1,
                       [&](int64_t k) {
                         parts[static_cast<std::size_t>(k)] = compare_chunk(
                             got, want, poison, atol, rtol, k * kCompareChunk,
                             std::min(n, (k + 1) * kCompareChunk));
                       });
  // Merge in element order: the first non-finite element wins, else the largest error
  // (the earliest on ties), exactly as one pass over the elements would choose.
  double sum_d2 = 0, sum_w2 = 0, worst_d = -1;
  bool worst_nonfinite = false;
  for (const ChunkErrors& c : parts) {
    const protocol::OutputError& p = c.e;
    e.max_abs_err = std::max(e.max_abs_err, p.max_abs_err);
    e.max_rel_err = std::max(e.max_rel_err, p.max_rel_err);
    e.over_tol += p.over_tol;
    e.nan += p.nan;
    e.inf += p.inf;
    e.truth_nonfinite += p.truth_nonfinite;
    e.unwritten += p.unwritten;
    sum_d2 += c.sum_d2;
    sum_w2 += c.sum_w2;
    if (p.worst_index < 0 || worst_nonfinite) continue;
    if (c.worst_nonfinite || c.worst_d > worst_d) {
      worst_nonfinite = c.worst_nonfinite;
      worst_d = c.worst_d;
      e.worst_index = p.worst_index;
      e.worst_got = p.worst_got;
      e.worst_want = p.worst_want;
      e.worst_kind = p.worst_kind;
    }
  }
  double norm_d = std::sqrt(sum_d2), norm_w = std::sqrt(sum_w2);
  e.rel_l2_err = norm_w > 0 ? norm_d / norm_w : norm_d;
  if (!std::isfinite(e.rel_l2_err)) e.rel_l2_err = std::numeric_limits<double>::max();
  return e;
}

protocol::CaseResult check_case(Backend& backend, const Module& module, const ops::Op& op,
                                const protocol::CheckCase& c, const CaseData& data) {
  auto t0 = std::chrono::steady_clock::now();
  protocol::CaseResult res;
  res.case_id = c.case_id;
  const auto out_decls = op.outputs();

  // Output templates: the truth's shape in the dtype the candidate writes.
  std::vector<ops::HostTensor> out_host;
  for (std::size_t k = 0; k < out_decls.size(); ++k) {
    out_host.push_back(
        ops::HostTensor::make(output_dtype(out_decls[k], data.dtype), data.truth[k].shape));
  }
  // The pristine inputs go to the device once per case; every repeat starts from a
  // device copy of them, and the candidate's inputs and repeats are compared on the device,
  // so a GPU-sized case moves its inputs over the bus once and its outputs once (plus any
  // repeat that differs). Repeat 0 writes output set A, which is kept; later repeats write
  // set B and are compared with A.
  //
  // Every buffer the candidate gets has kGuardBytes of a known pattern before its start
  // and after its end, checked after each run: a write past either end (a tail loop with
  // the wrong bound, an index of -1) is named, not left to the luck of the heap's layout.
  std::vector<DeviceBuffer> pristine, in_dev, out_first, out_next;
  std::vector<kgate_tensor> in_desc, first_desc, next_desc;
  const std::vector<unsigned char> guard_pattern = {0xa5, 0x5a, 0xc3, 0x3c};
  DeviceBuffer guard_ref(backend, kGuardBytes);
  backend.fill(guard_ref.get(), guard_pattern, kGuardBytes);
  // The candidate's part of a guarded buffer.
  auto at = [](const DeviceBuffer& b) { return static_cast<unsigned char*>(b.get()) + kGuardBytes; };
  auto guarded = [&](std::vector<DeviceBuffer>& into, std::size_t bytes) {
    into.emplace_back(backend, kGuardBytes + bytes + kGuardBytes);
    unsigned char* base = static_cast<unsigned char*>(into.back().get());
    backend.copy(base, guard_ref.get(), kGuardBytes);
    backend.copy(base + kGuardBytes + bytes, guard_ref.get(), kGuardBytes);
    return static_cast<void*>(base + kGuardBytes);
  };
  for (const auto& t : data.inputs) {
    pristine.emplace_back(backend, t.bytes.size());
    backend.to_device(pristine.back().get(), t.bytes.data(), t.bytes.size());
    in_desc.push_back(describe(t, guarded(in_dev, t.bytes.size())));
  }
  const int repeats = std::max(1, c.repeats);
  for (const auto& t : out_host) {
    first_desc.push_back(describe(t, guarded(out_first, t.bytes.size())));
    if (repeats > 1) next_desc.push_back(describe(t, guarded(out_next, t.bytes.size())));
  }
  // What a run wrote into the guards: "" = nothing.
  auto guards_hit = [&](const std::vector<DeviceBuffer>& bufs, const char* what,
                        const std::vector<ops::TensorDecl>& names) -> std::string {
    for (std::size_t k = 0; k < bufs.size(); ++k) {
      const std::size_t bytes = bufs[k].bytes() - 2 * kGuardBytes;
      for (const bool after : {true, false}) {
        const unsigned char* guard = after ? at(bufs[k]) + bytes : static_cast<const unsigned char*>(bufs[k].get());
        if (backend.equal(guard, guard_ref.get(), kGuardBytes)) continue;
        std::vector<unsigned char> seen(kGuardBytes);
        backend.to_host(seen.data(), guard, kGuardBytes);
        // Counted from the buffer's edge outwards.
        std::size_t changed = 0, first = kGuardBytes;
        for (std::size_t i = 0; i < kGuardBytes; ++i)
          if (seen[i] != guard_pattern[i % guard_pattern.size()]) {
            ++changed;
            first = std::min(first, after ? i : kGuardBytes - 1 - i);
          }
        const std::string name = k < names.size() ? "'" + names[k].name + "'" : std::to_string(k);
        return std::string(what) + " " + name + ": " + std::to_string(changed) + " of the " +
               std::to_string(kGuardBytes) + " guard bytes " + (after ? "after its end" : "before its start") +
               " changed (the nearest changed byte is " + std::to_string(first) + " bytes " +
               (after ? "past the end" : "before the start") + ")";
      }
    }
    return "";
  };
  const auto in_decls = op.inputs();

  std::vector<std::vector<ops::HostTensor>> runs;  // [0] and every repeat that differs
  for (int r = 0; r < repeats; ++r) {
    std::vector<DeviceBuffer>& out_dev = r == 0 ? out_first : out_next;
    // Fresh copies of the pristine inputs and poisoned outputs before every run (the
    // guards stay as they were: a hit ends the case below).
    for (std::size_t k = 0; k < in_dev.size(); ++k)
      backend.copy(at(in_dev[k]), pristine[k].get(), pristine[k].bytes());
    for (std::size_t k = 0; k < out_dev.size(); ++k)
      backend.fill(at(out_dev[k]), poison_pattern(out_host[k].dtype), out_host[k].bytes.size());
    // The descriptors are handed over by value each time: a candidate that scribbles on
    // them must not change what the next repeat sees.
    std::vector<kgate_tensor> ins = in_desc, outs = r == 0 ? first_desc : next_desc;
    int rc = backend.run(module, ins, outs);
    if (rc != 0 && res.return_code == 0) res.return_code = rc;
    // Every guarded buffer, the first run's outputs too (a candidate may keep their
    // address and write there later).
    res.out_of_bounds = guards_hit(out_dev, "output", out_decls);
    if (res.out_of_bounds.empty() && r > 0) res.out_of_bounds = guards_hit(out_first, "output", out_decls);
    if (res.out_of_bounds.empty()) res.out_of_bounds = guards_hit(in_dev, "input", in_decls);
    if (!res.out_of_bounds.empty()) break;

    for (std::size_t k = 0; k < in_dev.size(); ++k) {
      if (!backend.equal(at(in_dev[k]), pristine[k].get(), pristine[k].bytes()))
        res.inputs_modified = true;
    }
    bool same_as_first = r > 0;
    for (std::size_t k = 0; r > 0 && k < out_dev.size(); ++k) {
      if (!backend.equal(at(out_dev[k]), at(out_first[k]), out_host[k].bytes.size()))
        same_as_first = false;
    }
    if (same_as_first) continue;  // its errors are the first's
    if (r > 0) res.deterministic = false;
    std::vector<ops::HostTensor> got = out_host;
    for (std::size_t k = 0; k < got.size(); ++k)
      backend.to_host(got[k].bytes.data(), at(out_dev[k]), got[k].bytes.size());
    runs.push_back(std::move(got));
  }
  // A write past the candidate's own buffers could have reached the pristine copies.
  std::vector<unsigned char> scratch;
  for (std::size_t k = 0; k < pristine.size() && !res.inputs_modified; ++k) {
    scratch.resize(data.inputs[k].bytes.size());
    backend.to_host(scratch.data(), pristine[k].get(), scratch.size());
    if (scratch != data.inputs[k].bytes) res.inputs_modified = true;
  }

  // Report the worst repeat per output (most elements out of tolerance, then largest
  // error), so one snapshot's numbers stay consistent with each other. Only repeats that
  // differ from the first were kept; an output they share with it is not compared again.
  for (std::size_t k = 0; k < out_decls.size(); ++k) {
    protocol::OutputError worst;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      if (r > 0 && runs[r][k].bytes == runs.front()[k].bytes) continue;
      auto e = compare_output(out_decls[k].name, runs[r][k], data.truth[k], c.atol, c.rtol);
      if (r == 0 || e.over_tol > worst.over_tol ||
          (e.over_tol == worst.over_tol && e.rel_l2_err > worst.rel_l2_err)) {
        worst = std::move(e);
      }
    }
    res.outputs.push_back(std::move(worst));
  }
  res.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace kgate::native
