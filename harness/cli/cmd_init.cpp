// `kgate init [DIR]`: scaffold a kernel repository that uses an installed kgate as a tool:
//   configs/levels/native.yaml       the repository's own native problems (kernels/native)
//   configs/levels/kernelbench.yaml  KernelBench level 1 from a checkout at ${KERNELBENCH_ROOT}
//   kernels/native/*.yaml + starters two problems to start from (kgate's softmax, rmsnorm)
//   kernels/kernelbench/level1/      starting candidates (ModelNew) for the KernelBench level
//   suites/smoke.yaml                a few minutes on the host CPU (no GPU)
//   suites/nightly.yaml suites/pr.yaml  the GPU suites the CI workflows run
//   .github/workflows/{nightly,pr,weekly}.yml, .github/actionlint.yaml, Jenkinsfile
//                                    kgate's CI templates (share/kgate/ci), installing
//                                    the pinned kgate (--kgate-ref, --kgate-git)
// GPU targets come built in (configs/gpus of kgate's data) until the repository adds its
// own configs/gpus. An existing file is never overwritten: it is kept and named.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/paths.h"
#include "kgate/build_info.h"

namespace fs = std::filesystem;

namespace kgate::cli {
namespace {

std::string read_text(const fs::path& p) {
  return core::read_file_or_throw<InfraError>(
      p.string(), p.string() + ": cannot read (kgate's data directory is " + paths::data_dir() + ")");
}

// The CI templates with the pinned kgate written in: `KGATE_GIT: ...` / `KGATE_REF: ...`
// (workflow env) and `KGATE_GIT = '...'` / `KGATE_REF = '...'` (Jenkinsfile).
std::string pin(std::string text, const std::string& git, const std::string& ref) {
  auto set = [&](const std::string& key, const std::string& value) {
    if (value.empty()) return;
    text = std::regex_replace(text, std::regex("(\n\\s*" + key + ": ).*"), "$1" + value);
    text = std::regex_replace(text, std::regex("(\n\\s*" + key + " = ').*(')"), "$1" + value + "$2");
  };
  set("KGATE_GIT", git);
  set("KGATE_REF", ref);
  return text;
}

// A native problem of kgate's own (kernelbench/native), its starters beside it.
std::string problem_yaml(const std::string& id) {
  std::string y = read_text(fs::path(paths::data_dir()) / "kernelbench" / "native" / (id + ".yaml"));
  return "# From kgate's built-in problems; the starters are yours to change (kgate check gates\n"
         "# every change against the version it replaces).\n" + y;
}

constexpr const char* kNativeLevel = R"(version: 1
id: native
title: This repository's native kernels (one YAML per problem in kernels/native)
kind: native
root: ../../kernels/native
select: all
baseline: starter
)";

constexpr const char* kKernelBenchLevel = R"(version: 1
id: kernelbench
title: KernelBench level 1 from a checkout (set KERNELBENCH_ROOT to it)
kind: kernelbench
# Without KERNELBENCH_ROOT the level is unavailable: the suites that name it say so and
# every other suite still runs.
root: ${KERNELBENCH_ROOT}/KernelBench/level1
select: list
problems: [19_ReLU, 23_Softmax]
baseline: compile
# Starting candidates (ModelNew) named like the problem; a problem without one starts from
# torch.compile's own model, its Triton kernels as the candidates (starter: auto).
solutions: ../../kernels/kernelbench/level1
starter: auto
)";

constexpr const char* kSmokeSuite = R"(version: 1
id: smoke
title: The native kernels on the host CPU, small budget (a few minutes, no GPU)
levels: [native]
gpus: [cpu]
backend: host
budget:
  max_experiments: 4
  problem_wall_s: 60
  suite_wall_s: 300
  problem_floor_s: 10
  max_consecutive_reverts: 3
agent:
  kind: tuner
gates:
  seeds: 2
measurement:
  min_time_s: 0.05
  max_time_s: 0.5
  min_samples: 8
  target_rse: 0.05
  flush_l2: false
fail_on:
  correctness: true
  performance: false
)";

constexpr const char* kNightlySuite = R"(version: 1
id: nightly
title: Nightly search over the native kernels and KernelBench level 1
levels: [native, kernelbench]
gpus: [h200]
backend: cuda
budget:
  max_experiments: 40
  problem_wall_s: 1800
  suite_wall_s: 21600      # 6 h: .github/workflows/nightly.yml gives a shard 7 h
  problem_floor_s: 120
  max_consecutive_reverts: 5
  target_speedup: 2.0
agent:
  kind: tuner
gates:
  seeds: 3
  regression_threshold: 1.03
measurement:
  min_time_s: 0.5
  max_time_s: 5
  min_samples: 30
  target_rse: 0.005
fail_on:
  correctness: true
  performance: true
)";

constexpr const char* kPrSuite = R"(version: 1
id: pr
title: Pull-request check (the thresholds kgate check gates changed kernels with)
levels: [native, kernelbench]
gpus: [h200]
backend: cuda
budget:
  max_experiments: 4
  problem_wall_s: 300
  suite_wall_s: 2700       # 45 min: .github/workflows/pr.yml gives the check 90 min
  problem_floor_s: 60
  max_consecutive_reverts: 2
agent:
  kind: tuner
gates:
  seeds: 5
  regression_threshold: 1.02
  confidence: 0.99
measurement:
  min_time_s: 0.5
  max_time_s: 5
  min_samples: 30
  target_rse: 0.005
fail_on:
  correctness: true
  performance: true
)";

constexpr const char* kSolutionsReadme = R"(# Starting candidates for KernelBench level 1

A `ModelNew` file named like the problem (`23_Softmax.py`) is where the search on that
problem starts; a problem without one starts from torch.compile's model (see
`configs/levels/kernelbench.yaml`).
)";

constexpr const char* kGitignore = R"(/out/
/out-*/
/.kernelbench/
__pycache__/
)";

std::string readme(const std::string& ref) {
  return R"(# Kernels gated by kgate

Native kernels in `kernels/native/` (a problem YAML each, starters beside it), KernelBench
level 1 from a checkout at `$KERNELBENCH_ROOT` (`configs/levels/kernelbench.yaml`), suites in
`suites/`. The GPU targets are kgate's built-in ones until `configs/gpus/` exists here.

```sh
kgate validate --plan                          # every config, and what each suite runs
kgate run suites/smoke.yaml --out out          # the native kernels on this CPU
kgate check --base origin/main --suite suites/smoke.yaml --out out-check   # a PR check
KERNELBENCH_ROOT=/path/to/KernelBench kgate run suites/nightly.yaml --shard 1/4 --out out-1
```

CI: `.github/workflows/` (nightly shards + merge + history, PR check, weekly report) and
`Jenkinsfile` install kgate )" + ref + R"( once per runner (cached) from `KGATE_GIT`;
`.github/actionlint.yaml` names the self-hosted runner labels.
)";
}

struct Writer {
  fs::path root;
  int written = 0, kept = 0;

  void put(const std::string& rel, const std::string& text) {
    fs::path p = root / rel;
    std::error_code ec;
    if (fs::exists(p, ec)) {
      std::printf("  kept     %s (exists)\n", rel.c_str());
      ++kept;
      return;
    }
    fs::create_directories(p.parent_path(), ec);
    if (ec) throw InfraError(p.parent_path().string() + ": cannot create: " + ec.message());
    std::ofstream out(p, std::ios::binary);
    out << text;
    if (!out.flush()) throw InfraError(p.string() + ": cannot write");
    std::printf("  wrote    %s\n", rel.c_str());
    ++written;
  }
};

}  // namespace

ExitCode cmd_init(const InitOptions& o) {
  const fs::path data = paths::data_dir();
  std::error_code ec;
  if (!fs::is_directory(data / "ci", ec) || !fs::is_directory(data / "kernelbench" / "native", ec))
    throw InfraError("kgate's data directory " + data.string() +
                     " has no ci/ or kernelbench/native/ (a broken install?)");
  fs::path root = fs::absolute(o.dir.empty() ? "." : o.dir, ec).lexically_normal();
  if (fs::exists(root, ec) && !fs::is_directory(root, ec))
    throw UsageError(o.dir + ": error: not a directory");
  const char* env_git = std::getenv("KGATE_GIT");
  const std::string git = !o.kgate_git.empty() ? o.kgate_git : env_git && *env_git ? env_git : "";
  const std::string ref = !o.kgate_ref.empty() ? o.kgate_ref : std::string("v") + build::kVersion;

  std::printf("kgate init: %s (kgate %s, %s)\n", root.string().c_str(), build::kVersion, build::kGitSha);
  Writer w{root};
  w.put("configs/levels/native.yaml", kNativeLevel);
  w.put("configs/levels/kernelbench.yaml", kKernelBenchLevel);
  for (const char* id : {"softmax", "rmsnorm"}) {
    w.put(std::string("kernels/native/") + id + ".yaml", problem_yaml(id));
    for (const char* ext : {".cpp", ".cu"}) {
      std::string starter = std::string("starters/") + id + ext;
      w.put("kernels/native/" + starter, read_text(data / "kernelbench" / "native" / starter));
    }
  }
  w.put("kernels/kernelbench/level1/README.md", kSolutionsReadme);
  w.put("suites/smoke.yaml", kSmokeSuite);
  w.put("suites/nightly.yaml", kNightlySuite);
  w.put("suites/pr.yaml", kPrSuite);
  for (const char* wf : {"nightly.yml", "pr.yml", "weekly.yml"})
    w.put(std::string(".github/workflows/") + wf, pin(read_text(data / "ci" / wf), git, ref));
  w.put(".github/actionlint.yaml", read_text(data / "ci" / "actionlint.yaml"));
  w.put("Jenkinsfile", pin(read_text(data / "ci" / "Jenkinsfile"), git, ref));
  w.put(".gitignore", kGitignore);
  w.put("README.md", readme(ref));

  std::printf("%d file%s written, %d kept; the CI installs kgate %s from %s\n", w.written,
              w.written == 1 ? "" : "s", w.kept, ref.c_str(),
              git.empty() ? "KGATE_GIT (set it in .github/workflows/*.yml and Jenkinsfile, or rerun with --kgate-git)"
                          : git.c_str());
  std::printf("next: cd %s && kgate validate --plan && kgate run suites/smoke.yaml --out out\n",
              root.string().c_str());
  return ExitCode::kPass;
}

}  // namespace kgate::cli
