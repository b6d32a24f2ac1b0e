// Every built-in op's PyTorch form (Op::torch_form, the reference columns of native
// problems) computes what the op's float64 reference computes: the module kgate writes is
// run in float64 on the op's own inputs by the Python kgate uses, and its outputs compared
// with reference_f64. Skipped without torch unless KGATE_REQUIRE_TORCH=1 (CI).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/error.h"
#include "ops/op.h"

namespace kgate::ops {
namespace {
namespace fs = std::filesystem;

std::string python() {
  if (const char* e = std::getenv("KGATE_PYTHON"); e != nullptr && *e) return e;
  const fs::path venv = fs::path(KGATE_SOURCE_DIR) / ".venv/bin/python";
  return fs::exists(venv) ? venv.string() : "python3";
}

int run(const std::string& cmd, std::string* out) {
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (f == nullptr) return -1;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, f) != nullptr) *out += buf;
  const int st = pclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Small dims of every built-in op (odd sizes: tails and broadcasts).
Dims dims_of(const std::string& op) {
  if (op == "matmul") return {{"M", 7}, {"K", 13}, {"N", 5}};
  if (op == "cross_entropy") return {{"R", 9}, {"V", 37}};
  if (op == "rotary_embedding") return {{"B", 2}, {"H", 3}, {"S", 5}, {"D", 8}};
  return {{"R", 6}, {"C", 33}};
}

// Runs `form` (a module file) on the inputs written beside it; writes outputs as f64.
constexpr const char* kRunner = R"(
import importlib.util, json, sys
import torch
spec = json.load(open(sys.argv[1]))
m = importlib.util.spec_from_file_location("form", spec["module"])
mod = importlib.util.module_from_spec(m)
m.loader.exec_module(mod)
dt = {"f64": torch.float64, "i64": torch.int64, "i32": torch.int32}
ins = [torch.frombuffer(bytearray(open(t["file"], "rb").read()), dtype=dt[t["dtype"]]).reshape(t["shape"])
       for t in spec["inputs"]]
# the model's float inputs are already float64: it runs in float64, as the worker's truth
out = mod.Model()(*ins)
outs = out if isinstance(out, (tuple, list)) else [out]
for o, path in zip(outs, spec["outputs"]):
    open(path, "wb").write(o.detach().to(torch.float64).contiguous().numpy().tobytes())
)";

TEST(OpsTorchForm, EveryBuiltinOpsFormComputesItsFloat64Reference) {
  const std::string py = python();
  std::string probe;
  if (run(py + " -c 'import torch'", &probe) != 0) {
    if (std::getenv("KGATE_REQUIRE_TORCH") != nullptr && std::string(std::getenv("KGATE_REQUIRE_TORCH")) == "1")
      FAIL() << py << " cannot import torch and KGATE_REQUIRE_TORCH=1:\n" << probe;
    GTEST_SKIP() << py << " has no torch";
  }
  const fs::path dir = fs::temp_directory_path() / ("kgate-torch-form-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "run.py") << kRunner;
  for (const std::string& name : op_names()) {
    SCOPED_TRACE(name);
    const Op& op = *find_op(name);
    ASSERT_FALSE(op.torch_form().empty()) << "no PyTorch form";
    const Dims dims = dims_of(name);
    const fs::path module = dir / (name + ".py");
    std::ofstream(module) << torch_form_module(op, dims, DType::kF64, "the PyTorch form of " + name);
    const std::vector<HostTensor> in = op.make_inputs(dims, DType::kF64, 11, Distribution::kNormal);
    std::ostringstream spec;
    spec << "{\"module\": \"" << module.string() << "\", \"inputs\": [";
    for (std::size_t i = 0; i < in.size(); ++i) {
      const fs::path f = dir / (name + ".in" + std::to_string(i));
      std::ofstream(f, std::ios::binary).write(reinterpret_cast<const char*>(in[i].bytes.data()),
                                               static_cast<std::streamsize>(in[i].bytes.size()));
      spec << (i ? ", " : "") << "{\"file\": \"" << f.string() << "\", \"dtype\": \"" << to_string(in[i].dtype)
           << "\", \"shape\": [";
      for (std::size_t d = 0; d < in[i].shape.size(); ++d) spec << (d ? ", " : "") << in[i].shape[d];
      spec << "]}";
    }
    spec << "], \"outputs\": [";
    const std::size_t n_out = op.outputs().size();
    for (std::size_t k = 0; k < n_out; ++k)
      spec << (k ? ", " : "") << "\"" << (dir / (name + ".out" + std::to_string(k))).string() << "\"";
    spec << "]}";
    std::ofstream(dir / (name + ".json")) << spec.str();
    std::string out;
    ASSERT_EQ(run(py + " " + (dir / "run.py").string() + " " + (dir / (name + ".json")).string(), &out), 0)
        << out << "\n" << torch_form_module(op, dims, DType::kF64, name);
    const std::vector<HostTensor> want = op.reference_f64(dims, in);
    ASSERT_EQ(want.size(), n_out);
    for (std::size_t k = 0; k < n_out; ++k) {
      std::ifstream f(dir / (name + ".out" + std::to_string(k)), std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(f)), {});
      const std::vector<double> ref = want[k].to_doubles();
      ASSERT_EQ(bytes.size(), ref.size() * sizeof(double)) << "output " << k << " has the wrong number of elements";
      for (std::size_t e = 0; e < ref.size(); ++e) {
        double v;
        std::memcpy(&v, bytes.data() + e * sizeof(double), sizeof v);
        ASSERT_NEAR(v, ref[e], 1e-9 * (1 + std::abs(ref[e]))) << "output " << k << " element " << e;
      }
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(OpsTorchForm, TheModuleDrawsEachInputInItsDtypeAndShape) {
  const std::string m = torch_form_module(*find_op("cross_entropy"), {{"R", 4}, {"V", 50}}, DType::kF16,
                                          "cross-entropy\nsecond line");
  EXPECT_EQ(m.rfind("# cross-entropy\n# second line\n", 0), 0u) << m;
  EXPECT_NE(m.find("def forward(self, logits, targets):\n        return F.cross_entropy(logits, targets)\n"),
            std::string::npos) << m;
  EXPECT_NE(m.find("torch.randn((4, 50), dtype=torch.float16),\n"), std::string::npos) << m;
  EXPECT_NE(m.find("torch.randint(0, 50, (4,), dtype=torch.int64),\n"), std::string::npos) << m;
}

}  // namespace
}  // namespace kgate::ops
