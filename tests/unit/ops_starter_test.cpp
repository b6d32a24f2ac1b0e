// Every kernelbench/native/*.yaml names a real op and valid shapes, and its host starter
// compiles and matches the float64 reference on the sweep shapes for every listed dtype
// (tunable starters: also with every knob at its last listed value).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "kgate/kernel.h"
#include "ops/op.h"

namespace kgate::ops {
namespace {

namespace fs = std::filesystem;

const fs::path kNative = fs::path(KGATE_SOURCE_DIR) / "kernelbench" / "native";

const std::vector<std::string>& problem_ids() {
  static const std::vector<std::string> ids = {"softmax",    "rmsnorm",       "layernorm",        "bias_gelu",
                                               "reduce_sum", "cross_entropy", "rotary_embedding", "matmul"};
  return ids;
}

Dims to_dims(const YAML::Node& n) {
  Dims d;
  for (const auto& kv : n) d[kv.first.as<std::string>()] = kv.second.as<int64_t>();
  return d;
}

// `// kgate:tune NAME=[a,b,c]` -> {"-DNAME=c", ...}: the last value of every knob.
std::string last_knob_flags(const fs::path& src) {
  std::ifstream in(src);
  std::string line, flags;
  const std::regex re(R"(//\s*kgate:tune\s+(\w+)=\[([^\]]*)\])");
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, re)) continue;
    std::string vals = m[2];
    flags += " -D" + std::string(m[1]) + "=" + vals.substr(vals.rfind(',') + 1);
  }
  return flags;
}

struct Lib {
  std::string label;
  kgate_run_fn fn = nullptr;
};

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

// Compiles every starter (and knob variant) once per process, in parallel; a .so newer
// than its source and every header under kgate/ (kernel.h, the starter helpers) is reused,
// so re-running the suite does not recompile.
const std::map<std::string, std::vector<Lib>>& starter_libs() {
  static const std::map<std::string, std::vector<Lib>> libs = [] {
    std::map<std::string, std::vector<Lib>> out_libs;
    const fs::path out = fs::path(KGATE_BINARY_DIR) / "ops_starter_test";
    fs::create_directories(out);
    std::string script;
    std::vector<std::pair<std::string, fs::path>> wanted;
    // The newest of kgate's headers (kernel.h and the starter helpers the starters include).
    fs::file_time_type headers_time = fs::file_time_type::min();
    for (const auto& e : fs::recursive_directory_iterator(fs::path(KGATE_SOURCE_DIR) / "harness" / "include" / "kgate"))
      if (e.is_regular_file()) headers_time = std::max(headers_time, e.last_write_time());
    for (const std::string& id : problem_ids()) {
      const YAML::Node y = YAML::LoadFile((kNative / (id + ".yaml")).string());
      const fs::path src = kNative / y["starters"]["host"].as<std::string>();
      std::vector<std::pair<std::string, std::string>> variants = {{"default", ""}};
      const std::string knobs = last_knob_flags(src);
      if (!knobs.empty()) variants.emplace_back("knobs" + knobs, knobs);
      for (std::size_t v = 0; v < variants.size(); ++v) {
        const fs::path so = out / (id + "_" + std::to_string(v) + ".so");
        wanted.emplace_back(id + " " + variants[v].first, so);
        std::error_code ec;
        if (fs::exists(so) && fs::last_write_time(so, ec) > fs::last_write_time(src, ec) &&
            fs::last_write_time(so, ec) > headers_time)
          continue;
        script += "rm -f " + so.string() + "; c++ -O2 -shared -fPIC -I " + (fs::path(KGATE_SOURCE_DIR) / "harness" / "include").string() +
                  variants[v].second + " -o " + so.string() + ".tmp " + src.string() + " > " + so.string() +
                  ".log 2>&1 && mv " + so.string() + ".tmp " + so.string() + " &\n";
      }
    }
    script += "wait\n";
    if (FILE* p = popen(script.c_str(), "r")) pclose(p);
    for (const auto& [label, so] : wanted) {
      void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
      Lib lib{label, nullptr};
      if (h) lib.fn = reinterpret_cast<kgate_run_fn>(dlsym(h, "kgate_run"));
      out_libs[label.substr(0, label.find(' '))].push_back(lib);
    }
    return out_libs;
  }();
  return libs;
}

TEST(OpsStarter, ProblemYamlsAreValid) {
  std::size_t n_yaml = 0;
  for (const auto& e : fs::directory_iterator(kNative)) n_yaml += e.path().extension() == ".yaml";
  EXPECT_EQ(n_yaml, problem_ids().size());
  for (const std::string& id : problem_ids()) {
    SCOPED_TRACE(id);
    const YAML::Node y = YAML::LoadFile((kNative / (id + ".yaml")).string());
    EXPECT_EQ(y["version"].as<int>(), 1);
    EXPECT_EQ(y["id"].as<std::string>(), id);
    EXPECT_FALSE(y["title"].as<std::string>().empty());
    const Op* op = find_op(y["op"].as<std::string>());
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->check_dims(to_dims(y["bench"])), "");
    EXPECT_EQ(op->check_dims(to_dims(y["host_bench"])), "");
    ASSERT_GE(y["sweep"].size(), 3u);
    for (const auto& s : y["sweep"]) EXPECT_EQ(op->check_dims(to_dims(s)), "");
    for (const auto& d : y["dtypes"]) EXPECT_TRUE(parse_dtype(d.as<std::string>()).has_value());
    EXPECT_TRUE(parse_dtype(y["bench_dtype"].as<std::string>()).has_value());
    EXPECT_TRUE(fs::exists(kNative / y["starters"]["host"].as<std::string>()));
    EXPECT_EQ(y["starters"]["cuda"].as<std::string>(), "starters/" + id + ".cu");
  }
}

// Allclose against the truth, and no non-finite value where the truth is finite.
std::string compare(const HostTensor& got, const HostTensor& truth, Tolerance tol) {
  const auto g = got.to_doubles(), t = truth.to_doubles();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!(std::fabs(g[i] - t[i]) <= tol.atol + tol.rtol * std::fabs(t[i]))) {
      std::ostringstream os;
      os << "element " << i << ": got " << g[i] << ", truth " << t[i];
      return os.str();
    }
  }
  return "";
}

TEST(OpsStarter, HostStartersMatchTheReference) {
  for (const std::string& id : problem_ids()) {
    const YAML::Node y = YAML::LoadFile((kNative / (id + ".yaml")).string());
    const Op& op = *find_op(y["op"].as<std::string>());
    for (const Lib& lib : starter_libs().at(id)) {
      ASSERT_NE(lib.fn, nullptr) << lib.label << " did not compile or load (see build/ops_starter_test/*.log)";
      for (const auto& dn : y["dtypes"]) {
        const DType dt = *parse_dtype(dn.as<std::string>());
        Tolerance tol = op.default_tolerance(dt);
        if (y["tolerance"] && y["tolerance"][dn.as<std::string>()]) {
          tol.atol = y["tolerance"][dn.as<std::string>()]["atol"].as<double>();
          tol.rtol = y["tolerance"][dn.as<std::string>()]["rtol"].as<double>();
        }
        int shape_i = 0;
        for (const auto& s : y["sweep"]) {
          const Dims dims = to_dims(s);
          // Adversarial distributions on the first shapes, at 10x tolerance (as the gate does).
          std::vector<Distribution> dists = {Distribution::kNormal};
          if (shape_i++ < 2) dists = {Distribution::kNormal, Distribution::kLarge, Distribution::kMixed,
                                      Distribution::kTiny, Distribution::kUniform01};
          for (Distribution dist : dists) {
            SCOPED_TRACE(lib.label + " " + std::string(to_string(dt)) + " " + std::string(to_string(dist)) +
                         " shape #" + std::to_string(shape_i));
            auto in = op.make_inputs(dims, dt, 1234, dist);
            const auto truth = op.reference_f64(dims, in);
            std::vector<HostTensor> out;
            for (const auto& o : op.outputs()) out.push_back(HostTensor::make(dt, op.shape_of(o, dims)));
            std::vector<kgate_tensor> ti, to;
            for (auto& t : in) ti.push_back(describe(t));
            for (auto& t : out) to.push_back(describe(t));
            ASSERT_EQ(lib.fn(ti.data(), static_cast<int32_t>(ti.size()), to.data(), static_cast<int32_t>(to.size()),
                             nullptr),
                      0);
            const double scale = dist == Distribution::kNormal ? 1 : 10;
            EXPECT_EQ(compare(out[0], truth[0], {tol.atol * scale, tol.rtol * scale}), "");
          }
        }
      }
    }
  }
  // Unexpected dtype or rank: a non-zero return, not a crash.
  for (const std::string& id : problem_ids()) {
    const Lib& lib = starter_libs().at(id).at(0);
    ASSERT_NE(lib.fn, nullptr) << id;
    HostTensor t = HostTensor::make(DType::kI32, {2, 2, 2, 2});
    std::vector<kgate_tensor> ti(3, describe(t)), to(1, describe(t));
    EXPECT_NE(lib.fn(ti.data(), static_cast<int32_t>(find_op(id)->inputs().size()), to.data(), 1, nullptr), 0) << id;
  }
}

}  // namespace
}  // namespace kgate::ops
