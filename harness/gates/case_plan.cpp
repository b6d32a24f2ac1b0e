#include "gates/case_plan.h"

#include <algorithm>
#include <set>

namespace kgate::gates {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

std::vector<uint64_t> derive_seeds(uint64_t root, int n) {
  std::vector<uint64_t> out;
  std::set<uint64_t> seen;
  uint64_t state = root;
  while (static_cast<int>(out.size()) < std::max(n, 1)) {
    state = splitmix64(state);
    uint64_t s = state % 1000000000ULL;
    if (seen.insert(s).second) out.push_back(s);
  }
  return out;
}

std::string make_case_id(uint64_t seed, const ops::Op& op, const ops::Dims& dims, DType dtype,
                         ops::Distribution dist) {
  std::string id = "seed=" + std::to_string(seed) + "/";
  bool first = true;
  std::set<std::string> done;
  auto add = [&](const std::string& k, int64_t v) {
    if (!first) id += ",";
    id += k + "=" + std::to_string(v);
    first = false;
    done.insert(k);
  };
  for (const auto& d : op.dims())
    if (auto it = dims.find(d); it != dims.end()) add(d, it->second);
  for (const auto& [k, v] : dims)
    if (!done.count(k)) add(k, v);
  id += "/" + std::string(to_string(dtype)) + "/" + std::string(ops::to_string(dist));
  return id;
}

int64_t total_elements(const ops::Op& op, const ops::Dims& dims) {
  int64_t n = 0;
  for (const auto& t : op.inputs()) n += product(op.shape_of(t, dims));
  for (const auto& t : op.outputs()) n += product(op.shape_of(t, dims));
  return n;
}

int64_t derived_shape_cap(const std::string& backend) {
  return backend == "cuda" ? (int64_t{1} << 26) : (int64_t{1} << 22);
}

std::vector<ops::Dims> derived_shapes(const ops::Op& op, const ops::Dims& bench,
                                      int64_t max_elements) {
  std::vector<ops::Dims> out;
  if (bench.empty()) return out;
  ops::Dims plus1 = bench, three_eighths = bench;
  for (auto& [k, v] : plus1) v = v + 1;
  for (auto& [k, v] : three_eighths) v = std::max<int64_t>(1, v * 3 / 8 + 1);
  for (const ops::Dims& d : {bench, plus1, three_eighths}) {
    if (!op.check_dims(d).empty()) continue;
    if (total_elements(op, d) > max_elements) continue;
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  return out;
}

ops::Tolerance tolerance_for(const config::NativeProblem& p, const ops::Op& op, DType dtype) {
  if (auto it = p.tolerance.find(dtype); it != p.tolerance.end()) return it->second;
  return op.default_tolerance(dtype);
}

ops::Tolerance tolerance_for(const config::NativeProblem& p, const ops::Op& op, DType dtype,
                             const ops::Dims& dims) {
  if (auto it = p.tolerance.find(dtype); it != p.tolerance.end()) return it->second;
  return op.tolerance_at(dtype, dims);
}

std::vector<CorrectnessCase> plan_correctness(const config::NativeProblem& p, const ops::Op& op,
                                              const std::string& backend, uint64_t root_seed,
                                              int n_seeds) {
  const std::vector<uint64_t> seeds = derive_seeds(root_seed, n_seeds);
  std::vector<DType> dtypes = p.dtypes;
  if (dtypes.empty()) dtypes.push_back(p.bench_dtype);

  // Shapes: the sweep plus what derives from the timed shape, valid ones, cheapest first.
  std::vector<ops::Dims> shapes;
  for (const auto& d : p.sweep)
    if (op.check_dims(d).empty() && std::find(shapes.begin(), shapes.end(), d) == shapes.end())
      shapes.push_back(d);
  const ops::Dims& timed = (backend == "host" && !p.host_bench.empty()) ? p.host_bench : p.bench;
  for (const auto& d : derived_shapes(op, timed, derived_shape_cap(backend)))
    if (std::find(shapes.begin(), shapes.end(), d) == shapes.end()) shapes.push_back(d);
  std::stable_sort(shapes.begin(), shapes.end(), [&](const ops::Dims& a, const ops::Dims& b) {
    return total_elements(op, a) < total_elements(op, b);
  });

  auto make = [&](uint64_t seed, const ops::Dims& dims, DType dtype, ops::Distribution dist,
                  bool adversarial) {
    CorrectnessCase c;
    c.adversarial = adversarial;
    c.check.case_id = make_case_id(seed, op, dims, dtype, dist);
    c.check.seed = seed;
    c.check.dims = dims;
    c.check.dtype = std::string(to_string(dtype));
    c.check.dist = std::string(ops::to_string(dist));
    c.check.repeats = 3;
    ops::Tolerance tol = tolerance_for(p, op, dtype, dims);
    // Adversarial magnitudes get ten times the tolerance: they test for NaN/Inf and gross
    // errors, not for the last bits.
    double scale = adversarial ? 10.0 : 1.0;
    c.check.atol = tol.atol * scale;
    c.check.rtol = tol.rtol * scale;
    for (const auto& t : op.outputs()) c.output_shapes[t.name] = op.shape_of(t, dims);
    return c;
  };

  std::vector<CorrectnessCase> out;
  if (shapes.empty()) return out;
  const std::vector<ops::Distribution> dists = {ops::Distribution::kNormal, ops::Distribution::kSigned};
  for (uint64_t s : seeds)
    for (DType dt : dtypes)
      for (auto dist : dists) out.push_back(make(s, shapes.front(), dt, dist, false));
  std::size_t rot = 0;
  for (std::size_t i = 1; i < shapes.size(); ++i)
    for (DType dt : dtypes)
      for (auto dist : dists) out.push_back(make(seeds[rot++ % seeds.size()], shapes[i], dt, dist, false));
  for (auto dist : {ops::Distribution::kLarge, ops::Distribution::kTiny, ops::Distribution::kMixed})
    for (DType dt : dtypes) out.push_back(make(seeds.front(), shapes.front(), dt, dist, true));
  return out;
}

std::vector<CorrectnessCase> plan_kernelbench_correctness(uint64_t root_seed, int n_seeds,
                                                          DType dtype, double atol, double rtol) {
  std::vector<CorrectnessCase> out;
  for (uint64_t s : derive_seeds(root_seed, std::max(1, n_seeds))) {
    // "problem": the problem's own get_inputs() distribution; "signed": the same with random
    // sign flips (torch.rand inputs are never negative, which lets `return x` pass ReLU).
    for (const char* dist : {"problem", "signed"}) {
      CorrectnessCase c;
      c.check.case_id = "seed=" + std::to_string(s) + "/" + std::string(to_string(dtype)) + "/" + dist;
      c.check.seed = s;
      c.check.dtype = std::string(to_string(dtype));
      c.check.dist = dist;
      c.check.repeats = 2;
      c.check.atol = atol;
      c.check.rtol = rtol;
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace kgate::gates
