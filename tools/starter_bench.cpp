// starter_bench: times host candidates of one op against each other, round-robin in one
// process, and checks each against the float64 reference (normal inputs, seed 1).
// Used to size host_bench shapes and to measure the tuning gap of the demo starters
// (docs/ops.md). Not part of the build:
//   g++ -O2 -std=c++20 -Iharness -Iharness/include tools/starter_bench.cpp harness/ops/*.cpp -ldl -o starter_bench
//   g++ -O3 -march=native -shared -fPIC -Iharness/include -DACC=8 kernelbench/native/starters/rmsnorm.cpp -o a.so
//   ./starter_bench rmsnorm f16 R=512 C=2048 -- ./default.so ./a.so
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "kgate/kernel.h"
#include "ops/op.h"

using namespace kgate;
using namespace kgate::ops;

namespace {

kgate_tensor describe(HostTensor& t) {
  kgate_tensor d{};
  d.data = t.bytes.data();
  d.dtype = static_cast<kgate_dtype>(t.dtype);
  d.ndim = static_cast<int32_t>(t.shape.size());
  const auto st = t.strides();
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    d.shape[i] = t.shape[i];
    d.strides[i] = st[i];
  }
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s OP DTYPE DIM=N... -- LIB.so... [seconds via KGATE_BENCH_S]\n", argv[0]);
    return 2;
  }
  const Op* op = find_op(argv[1]);
  const auto dt = parse_dtype(argv[2]);
  if (!op || !dt) {
    std::fprintf(stderr, "unknown op or dtype\n");
    return 2;
  }
  Dims dims;
  int i = 3;
  for (; i < argc && std::string(argv[i]) != "--"; ++i) {
    const std::string s = argv[i];
    const auto eq = s.find('=');
    dims[s.substr(0, eq)] = std::stoll(s.substr(eq + 1));
  }
  if (const std::string why = op->check_dims(dims); !why.empty()) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 2;
  }
  std::vector<kgate_run_fn> fns;
  std::vector<std::string> names;
  for (++i; i < argc; ++i) {
    void* h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      std::fprintf(stderr, "%s\n", dlerror());
      return 2;
    }
    fns.push_back(reinterpret_cast<kgate_run_fn>(dlsym(h, "kgate_run")));
    names.push_back(argv[i]);
  }
  const char* env_s = std::getenv("KGATE_BENCH_S");
  const double budget_s = env_s ? std::atof(env_s) : 6.0;
  auto in = op->make_inputs(dims, *dt, 1, Distribution::kNormal);
  const auto truth = op->reference_f64(dims, in);
  const Tolerance tol = op->default_tolerance(*dt);
  std::vector<std::vector<double>> ms(fns.size());
  const auto t0 = std::chrono::steady_clock::now();
  for (int rep = 0;; ++rep) {
    for (std::size_t f = 0; f < fns.size(); ++f) {
      std::vector<HostTensor> out;
      for (const auto& o : op->outputs()) out.push_back(HostTensor::make(*dt, op->shape_of(o, dims)));
      std::vector<kgate_tensor> ti, to;
      for (auto& t : in) ti.push_back(describe(t));
      for (auto& t : out) to.push_back(describe(t));
      const auto a = std::chrono::steady_clock::now();
      const int rc = fns[f](ti.data(), static_cast<int32_t>(ti.size()), to.data(), static_cast<int32_t>(to.size()), nullptr);
      const auto b = std::chrono::steady_clock::now();
      if (rc != 0) {
        std::printf("%s: kgate_run returned %d\n", names[f].c_str(), rc);
        return 1;
      }
      ms[f].push_back(std::chrono::duration<double, std::milli>(b - a).count());
      if (rep == 0) {
        double worst = 0;
        const auto r = truth[0].to_doubles(), o = out[0].to_doubles();
        for (std::size_t k = 0; k < r.size(); ++k)
          worst = std::max(worst, std::fabs(o[k] - r[k]) / (tol.atol + tol.rtol * std::fabs(r[k])));
        if (!(worst <= 1)) std::printf("%s: WRONG, max error / tolerance %g\n", names[f].c_str(), worst);
      }
    }
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (el > budget_s && rep >= 10) break;
  }
  for (std::size_t f = 0; f < fns.size(); ++f) {
    auto v = ms[f];
    std::sort(v.begin(), v.end());
    std::printf("%-40s min %8.3f ms  q25 %8.3f  median %8.3f  n %zu\n", names[f].c_str(), v[0], v[v.size() / 4],
                v[v.size() / 2], v.size());
  }
  return 0;
}
