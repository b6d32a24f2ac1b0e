// `kgate validate`: loads every config, level, suite and native problem file it is given
// (default: configs suites kernelbench/native), reports every error as
// "file:line:col: error: what" and, with --plan, prints what each suite would run. The
// KernelBench problem files of the suites it can plan are parsed too (by Python's own
// parser, kgate_worker/problem_lint.py; nothing of them runs).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "config/catalog.h"
#include "core/error.h"
#include "core/subprocess.h"
#include "worker/worker.h"

namespace fs = std::filesystem;

namespace kgate::cli {

namespace {

std::vector<std::string> default_paths() {
  // The current directory when it is a kgate repository, else the one kgate was built from.
  std::error_code ec;
  std::string root = fs::is_directory("configs", ec) ? "" : config::default_repo_root();
  std::vector<std::string> paths;
  for (const char* sub : {"configs", "suites", "kernelbench/native"}) {
    fs::path p = root.empty() ? fs::path(sub) : fs::path(root) / sub;
    if (fs::is_directory(p, ec)) paths.push_back(p.string());
  }
  return paths;
}

std::string shown(const std::string& path) {
  std::error_code ec;
  fs::path rel = fs::path(path).lexically_relative(fs::current_path(ec));
  if (ec || rel.empty() || rel.string().starts_with("..")) return path;
  return rel.string();
}

// In the op's own order (R before C), which is how people read a shape.
std::string dims_str(const std::string& op_name, const ops::Dims& d) {
  std::vector<std::string> order;
  if (const ops::Op* op = ops::find_op(op_name)) order = op->dims();
  for (const auto& [k, v] : d)
    if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
  std::string s;
  for (const auto& k : order)
    if (auto it = d.find(k); it != d.end())
      s += (s.empty() ? "" : " ") + k + "=" + std::to_string(it->second);
  return s;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void print_plan(const config::Plan& plan) {
  const config::Suite& s = plan.suite;
  std::printf("suite %s%s%s (%s)\n", s.id.c_str(), s.title.empty() ? "" : ": ", s.title.c_str(),
              shown(s.loc.file).c_str());
  std::printf("  budget: %d experiments and %s s per problem, %s s per suite; agent %s\n",
              s.budget.max_experiments, num(s.budget.problem_wall_s).c_str(),
              num(s.budget.suite_wall_s).c_str(), s.agent.kind.c_str());
  std::printf(
      "  gates: %d seeds, rho <= %s, keep at >= %sx, regression at %sx; fails on "
      "correctness%s\n",
      s.gates.seeds, num(s.gates.rho).c_str(), num(s.gates.keep_threshold).c_str(),
      num(s.gates.regression_threshold).c_str(), s.fail_on.performance ? " and performance" : "");
  // Compiled mode's kernel-level screen (docs/dispatch.md), when the plan has such problems.
  bool compiled = false;
  for (const auto& gid : s.gpus)
    for (const auto* it : plan.for_gpu(gid))
      compiled = compiled || (it->native && it->native->kernelbench_mode == "compiled");
  if (compiled)
    std::printf("  kernel-level screen: %s\n",
                s.budget.screen_slack > 0
                    ? ("an edited kernel more than " + num(100 * s.budget.screen_slack) +
                       "% slower alone is reverted before the model-level gates (budget.screen_slack)")
                          .c_str()
                    : "off (budget.screen_slack: 0)");
  if (s.torch_references) {
    std::string modes;
    for (const auto& mo : *s.torch_references) modes += (modes.empty() ? "" : ", ") + mo;
    std::printf("  reference columns (torch_references): %s\n", modes.empty() ? "none" : modes.c_str());
  }
  for (const auto& gid : s.gpus) {
    auto items = plan.for_gpu(gid);
    std::string backend = items.empty() ? "" : items.front()->backend;
    std::printf("  on %s (%s backend): %zu problems\n", gid.c_str(), backend.c_str(), items.size());
    for (const auto* it : items) {
      std::string what;
      if (it->native && it->native->kind == "kernelbench") {
        const std::string& mode = it->native->kernelbench_mode;
        what = shown(it->source) + (mode == "compiled"
                                        ? "  starts from torch.compile's model (" + it->native->kernelbench_baseline +
                                              "), its Triton kernels searched"
                                    : mode == "reference" ? "  starts from the reference model as its own ModelNew"
                                    : it->starter.empty() ? "" : "  starter " + shown(it->starter));
      } else if (it->native) {
        const auto& p = *it->native;
        const ops::Dims& shape =
            it->backend == "host" && !p.host_bench.empty() ? p.host_bench : p.bench;
        what = p.op + " " + dims_str(p.op, shape) + " " + std::string(to_string(p.bench_dtype)) +
               ", " + std::to_string(p.sweep.size()) + " sweep shapes x " +
               std::to_string(p.dtypes.size()) + " dtypes";
      } else {
        what = shown(it->source);
      }
      std::printf("    %-28s %s%s\n", it->problem.c_str(), what.c_str(),
                  it->skip_reason.empty() ? "" : ("  [skipped: " + it->skip_reason + "]").c_str());
    }
  }
}

// Parses the KernelBench problem files the plans name (each once) with Python's parser:
// each must parse and define Model, get_inputs and get_init_inputs at its top level, and
// a level's `solutions` file a search starts from must parse and define ModelNew
// (kgate_worker/problem_lint.py). Its findings are errors at their file:line:col; without
// a Python here the files are left to the run, said as a warning.
void lint_problem_files(const std::vector<config::Plan>& plans, config::Diagnostics& diags) {
  std::set<std::string> problems, starters, files;
  for (const auto& plan : plans)
    for (const auto& it : plan.items)
      if (it.kind == "kernelbench" && !it.source.empty()) {
        problems.insert(it.source);
        // a `solutions` file; the compiled and reference starts are the problem file itself
        if (!it.starter.empty() && it.native && it.starter != it.native->path) starters.insert(it.starter);
      }
  files = problems;
  files.insert(starters.begin(), starters.end());
  if (files.empty()) return;
  const config::SourceLoc first{*files.begin(), 1, 1};
  core::SpawnSpec spec;
  try {
    spec.argv = {worker::locate_python(), "-m", "kgate_worker.problem_lint"};
    spec.env["PYTHONPATH"] = worker::locate_python_package();
  } catch (const InfraError& e) {
    diags.warning(first, std::to_string(files.size()) + " KernelBench problem files not parsed: " + e.what());
    return;
  }
  spec.argv.insert(spec.argv.end(), problems.begin(), problems.end());
  if (!starters.empty()) {
    spec.argv.push_back("--starters");
    spec.argv.insert(spec.argv.end(), starters.begin(), starters.end());
  }
  spec.stdout_mode = core::SpawnSpec::Output::kPipe;
  spec.stderr_mode = core::SpawnSpec::Output::kPipe;
  core::RunOptions ro;
  ro.deadline_s = 60;
  const core::RunResult r = core::run(spec, ro);
  if (r.timed_out || r.status.shell_code() != 0) {
    diags.warning(first, std::to_string(files.size()) + " KernelBench problem files not parsed: " + spec.argv[0] +
                             " -m kgate_worker.problem_lint " +
                             (r.timed_out ? "ran past 60 s" : "exited " + std::to_string(r.status.shell_code())) +
                             (r.err.empty() ? "" : ": " + r.err.substr(0, 300)));
    return;
  }
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    // FILE:LINE:COL: error: WHAT, FILE one of ours (it may hold ':')
    const auto at = line.find(": error: ");
    if (at == std::string::npos) continue;
    std::string head = line.substr(0, at);
    config::SourceLoc loc;
    const auto c2 = head.rfind(':');
    const auto c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : head.rfind(':', c2 - 1);
    if (c1 == std::string::npos) continue;
    loc.file = head.substr(0, c1);
    try {
      loc.line = std::stoi(head.substr(c1 + 1, c2 - c1 - 1));
      loc.column = std::stoi(head.substr(c2 + 1));
    } catch (const std::exception&) {
      continue;
    }
    if (!files.count(loc.file)) continue;
    diags.error(loc, line.substr(at + 9));
  }
}

}  // namespace

ExitCode cmd_validate(const ValidateOptions& o) {
  std::vector<std::string> paths = o.paths.empty() ? default_paths() : o.paths;
  config::Diagnostics diags;
  config::Catalog cat = config::load_catalog(paths, diags);
  // What only a plan can tell (a host suite times a problem without host_bench at bench,
  // bounded by this machine's memory): every suite planned here, its errors counted with
  // the files' own. A suite over a level this machine cannot use (its checkout is not
  // here) is valid; it is only not plannable here.
  std::vector<config::Plan> plans;
  if (!diags.has_errors())
    for (const auto& s : cat.suites)
      if (config::unavailable_reason(cat, s).empty()) plans.push_back(config::plan_suite(cat, s, diags));
  if (!diags.has_errors()) lint_problem_files(plans, diags);
  for (const auto& d : diags.items()) std::fprintf(stderr, "%s\n", d.str().c_str());
  std::fflush(stderr);
  std::printf("validated %zu files: %d error%s", cat.files.size(), diags.error_count(),
              diags.error_count() == 1 ? "" : "s");
  if (diags.warning_count() > 0)
    std::printf(", %d warning%s", diags.warning_count(), diags.warning_count() == 1 ? "" : "s");
  std::printf("\n");
  if (diags.has_errors()) return ExitCode::kUsage;
  if (o.plan) {
    std::size_t next = 0;
    for (const auto& s : cat.suites) {
      std::printf("\n");
      if (std::string why = config::unavailable_reason(cat, s); !why.empty()) {
        std::printf("suite %s: not planned here: %s\n", s.id.c_str(), why.c_str());
        continue;
      }
      print_plan(plans.at(next++));
    }
  }
  return ExitCode::kPass;
}

}  // namespace kgate::cli
