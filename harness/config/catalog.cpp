#include "config/catalog.h"

#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "config/suggest.h"
#include "core/error.h"
#include "ops/op.h"
#include "core/paths.h"

namespace fs = std::filesystem;

namespace kgate::config {

namespace {

template <typename T>
const T* by_id(const std::vector<T>& v, std::string_view id) {
  for (const auto& x : v)
    if (x.id == id) return &x;
  return nullptr;
}

template <typename T>
std::vector<std::string> ids_of(const std::vector<T>& v) {
  std::vector<std::string> ids;
  for (const auto& x : v) ids.push_back(x.id);
  return ids;
}

// Identity of a file or directory for de-duplication and root comparison.
std::string canonical_of(const std::string& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return (ec ? fs::path(p).lexically_normal() : c).string();
}

bool is_yaml(const fs::path& p) {
  std::string e = p.extension().string();
  return e == ".yaml" || e == ".yml";
}

std::vector<std::string> yaml_files_in(const std::string& dir, bool recursive) {
  std::vector<std::string> out;
  std::error_code ec;
  auto add = [&](const fs::directory_entry& e) {
    // Anything named *.yaml that is not a directory: a FIFO, a device or a dangling link
    // among the configs is read (and refused by the reader, at its path), never skipped.
    if (is_yaml(e.path()) && !e.is_directory(ec))
      out.push_back(e.path().lexically_normal().string());
  };
  if (recursive) {
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      add(*it);
  } else {
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
         it.increment(ec))
      add(*it);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> kernelbench_files(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    std::string base = p.filename().string();
    if (it->is_directory(ec) && (base.starts_with(".") || base == "__pycache__")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec) && p.extension() == ".py" && !base.starts_with("_"))
      out.push_back(p.lexically_normal().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Loader {
  Diagnostics& diags;
  const OpCatalog& ops;
  Catalog cat;
  std::set<std::string> seen;         // canonical paths already read
  std::vector<LevelRefs> level_refs;  // parallel to cat.levels until sorting
  std::vector<SuiteRefs> suite_refs;  // parallel to cat.suites until sorting
  std::vector<std::string> suite_files;

  bool first_time(const std::string& path) { return seen.insert(canonical_of(path)).second; }

  void load_file(const std::string& path, std::optional<FileKind> kind) {
    if (!first_time(path)) return;
    const int errors_before = diags.error_count();
    if (!kind && fs::path(path).extension() == ".py") {
      // A KernelBench problem or solution is Python, checked by loading it, not as YAML.
      diags.error(SourceLoc{path, 0, 0},
                  "a Python file, not a YAML config: kgate validate checks configs (suites, "
                  "levels, GPU targets, native problems); a KernelBench problem is loaded and "
                  "checked by `kgate profile " + path + "` or `kgate bench --problem " + path +
                      " --candidate ...`, and its level by `kgate validate --plan`");
      return;
    }
    if (!kind) kind = file_kind_by_keys(path, &diags);
    if (!kind && diags.error_count() > errors_before) return;  // unreadable, empty, not YAML: said
    if (!kind) {
      diags.error(SourceLoc{path, 0, 0},
                  "cannot tell what kind of config this is: put it under a directory named "
                  "gpus/, levels/, suites/ or native/, or give it the top-level keys of one kind "
                  "(a suite's levels:, a GPU target's match:, a level's root:, a problem's op:)");
      return;
    }
    cat.files.push_back(path);
    switch (*kind) {
      case FileKind::kGpu:
        if (auto g = parse_gpu_file(path, diags)) cat.gpus.push_back(std::move(*g));
        break;
      case FileKind::kLevel: {
        LevelRefs r;
        if (auto l = parse_level_file(path, diags, &r)) {
          cat.levels.push_back(std::move(*l));
          level_refs.push_back(std::move(r));
        }
        break;
      }
      case FileKind::kSuite: {
        SuiteRefs r;
        if (auto s = parse_suite_file(path, diags, &r)) {
          cat.suites.push_back(std::move(*s));
          suite_refs.push_back(std::move(r));
        }
        suite_files.push_back(path);
        break;
      }
      case FileKind::kProblem:
        if (auto p = parse_native_problem_file(path, diags, ops))
          cat.problems.push_back(std::move(*p));
        break;
    }
  }

  void load_path(const std::string& raw, std::optional<FileKind> force = std::nullopt) {
    std::string path = fs::path(raw).lexically_normal().string();
    if (path.empty()) path = ".";
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      if (is_yaml(path)) {
        // `kgate validate demo.yaml` where demo.yaml is a directory: not a config file, and
        // validating whatever is inside it would answer another question.
        diags.error(SourceLoc{path, 0, 0}, "is a directory, not a YAML file");
        return;
      }
      const std::vector<std::string> files = yaml_files_in(path, true);
      if (files.empty())
        diags.warning(SourceLoc{path, 0, 0}, "no YAML files (.yaml, .yml) in this directory: nothing to validate");
      for (const auto& f : files) load_file(f, file_kind_of(f));
    } else if (fs::exists(path, ec)) {
      load_file(path, force ? force : file_kind_of(path));
    } else {
      diags.error(SourceLoc{path, 0, 0}, "no such file or directory");
    }
  }

  // A suite's levels and GPUs live in configs/ beside its suites/ directory.
  void load_suite_context() {
    for (size_t i = 0; i < suite_files.size(); ++i) {
      std::string root = repo_root_of(suite_files[i]);
      if (root.empty()) continue;
      std::string configs = (fs::path(root) / "configs").lexically_normal().string();
      for (const auto& f : yaml_files_in(configs, true)) load_file(f, file_kind_of(f));
    }
  }

  // A repository that defines no GPU target of its own (a user's repository with suites/
  // and configs/levels only) gets kgate's built-in ones (paths::builtin_gpus_dir()).
  void load_builtin_gpus() {
    if (!cat.gpus.empty() || (cat.suites.empty() && cat.levels.empty())) return;
    for (const auto& f : yaml_files_in(paths::builtin_gpus_dir(), false)) load_file(f, FileKind::kGpu);
  }

  void load_level_problems() {
    for (const auto& l : cat.levels) {
      if (l.kind != "native" || l.root.empty()) continue;
      std::error_code ec;
      if (!fs::is_directory(l.root, ec)) continue;
      for (const auto& f : yaml_files_in(l.root, false)) load_file(f, FileKind::kProblem);
    }
  }

  template <typename T>
  void check_duplicates(const std::vector<T>& items, const char* what) {
    std::map<std::string, const T*> first;
    for (const auto& x : items) {
      if (x.id.empty()) continue;
      auto [it, fresh] = first.emplace(x.id, &x);
      if (!fresh)
        diags.error(x.loc, std::string("duplicate ") + what + " id '" + x.id +
                               "' (first defined at " + it->second->loc.str() + ")");
    }
  }

  void check_problem_duplicates() {
    // Ids must be unique within a directory: that is the namespace a level sees.
    std::map<std::pair<std::string, std::string>, const NativeProblem*> first;
    for (const auto& p : cat.problems) {
      if (p.id.empty()) continue;
      std::string dir = canonical_of(fs::path(p.loc.file).parent_path().string());
      auto [it, fresh] = first.emplace(std::make_pair(dir, p.id), &p);
      if (!fresh)
        diags.error(p.loc, "duplicate native problem id '" + p.id + "' (first defined at " +
                               it->second->loc.str() + ")");
    }
  }

  void check_levels() {
    for (size_t i = 0; i < cat.levels.size(); ++i) {
      const LevelConfig& l = cat.levels[i];
      const LevelRefs& r = level_refs[i];
      std::error_code ec;
      if (l.root.empty() || !fs::is_directory(l.root, ec)) continue;  // reported by the loader
      if (l.kind.empty()) continue;  // a missing or misspelt kind: the loader said so
      std::vector<LevelProblem> avail = available_problems(cat, l);
      std::vector<std::string> names;
      for (const auto& p : avail) names.push_back(p.name);
      if (l.select == "list") {
        for (size_t j = 0; j < l.problems.size(); ++j) {
          std::string n = l.problems[j];
          if (l.kind == "kernelbench" && n.ends_with(".py")) n.resize(n.size() - 3);
          if (std::find(names.begin(), names.end(), n) == names.end())
            diags.error(j < r.problems.size() ? r.problems[j] : l.loc,
                        "level '" + l.id + "' lists problem '" + l.problems[j] +
                            "', which is not in '" + l.root + "'" + did_you_mean(n, names));
        }
      } else if (l.select == "glob" && !l.glob.empty()) {
        if (selected_problems(cat, l).empty())
          diags.error(l.loc, "level '" + l.id + "': glob '" + l.glob + "' matches no problem in '" +
                                 l.root + "'");
      } else if (avail.empty()) {
        diags.warning(l.loc, "level '" + l.id + "' has no problems in '" + l.root + "'");
      }
    }
  }

  void check_suites() {
    for (size_t i = 0; i < cat.suites.size(); ++i) {
      const Suite& s = cat.suites[i];
      const SuiteRefs& r = suite_refs[i];
      std::vector<std::string> level_ids = ids_of(cat.levels), gpu_ids = ids_of(cat.gpus);
      for (size_t j = 0; j < s.levels.size(); ++j)
        if (!cat.level(s.levels[j]))
          diags.error(j < r.levels.size() ? r.levels[j] : s.loc,
                      "suite '" + s.id + "' names level '" + s.levels[j] +
                          "', which is not defined in configs/levels" +
                          did_you_mean(s.levels[j], level_ids));
      for (size_t j = 0; j < s.gpus.size(); ++j) {
        const GpuTarget* g = cat.gpu(s.gpus[j]);
        SourceLoc at = j < r.gpus.size() ? r.gpus[j] : s.loc;
        if (!g) {
          diags.error(at, "suite '" + s.id + "' names GPU target '" + s.gpus[j] +
                              "', which is not defined in configs/gpus" +
                              did_you_mean(s.gpus[j], gpu_ids));
        } else if (s.backend != "auto" && !g->backend.empty() && g->backend != s.backend) {
          diags.error(at, "suite '" + s.id + "' runs backend '" + s.backend + "' but GPU target '" +
                              g->id + "' is a " + g->backend + " target");
        }
      }
      for (size_t j = 0; j < s.problems.size(); ++j) {
        SourceLoc at = j < r.problems.size() ? r.problems[j] : s.loc;
        const std::string& pid = s.problems[j];
        auto slash = pid.find('/');
        if (slash == std::string::npos) {
          diags.error(at, "problem '" + pid +
                              "' must be written '<level>/<problem>', e.g. 'native/" + pid + "'");
          continue;
        }
        std::string lid = pid.substr(0, slash), name = pid.substr(slash + 1);
        const LevelConfig* l = cat.level(lid);
        if (!l) {
          diags.error(at, "problem '" + pid + "' names level '" + lid +
                              "', which is not defined in configs/levels" +
                              did_you_mean(lid, level_ids));
          continue;
        }
        std::vector<std::string> names;
        for (const auto& p : available_problems(cat, *l)) names.push_back(p.name);
        if (std::find(names.begin(), names.end(), name) == names.end())
          diags.error(at, "problem '" + pid + "': level '" + lid + "' has no problem '" + name +
                              "'" + did_you_mean(name, names));
      }
    }
  }
};

template <typename T>
void sort_by_id(std::vector<T>& v) {
  std::stable_sort(v.begin(), v.end(), [](const T& a, const T& b) { return a.id < b.id; });
}

}  // namespace

const GpuTarget* Catalog::gpu(std::string_view id) const { return by_id(gpus, id); }
const LevelConfig* Catalog::level(std::string_view id) const { return by_id(levels, id); }
const Suite* Catalog::suite(std::string_view id) const { return by_id(suites, id); }

std::vector<LevelProblem> available_problems(const Catalog& cat, const LevelConfig& level) {
  std::vector<LevelProblem> out;
  if (level.root.empty()) return out;
  if (level.kind == "native") {
    std::string root = canonical_of(level.root);
    for (const auto& p : cat.problems) {
      if (p.id.empty() || canonical_of(fs::path(p.loc.file).parent_path().string()) != root)
        continue;
      out.push_back({level.id, level.id + "/" + p.id, p.id, &p, p.loc.file});
    }
    std::sort(out.begin(), out.end(),
              [](const LevelProblem& a, const LevelProblem& b) { return a.name < b.name; });
  } else if (level.kind == "kernelbench") {
    for (const auto& f : kernelbench_files(level.root)) {
      std::string rel = fs::path(f).lexically_relative(level.root).string();
      std::string name = rel.substr(0, rel.size() - 3);  // drop ".py"
      out.push_back({level.id, level.id + "/" + name, name, nullptr, f});
    }
  }
  return out;
}

std::vector<LevelProblem> selected_problems(const Catalog& cat, const LevelConfig& level) {
  std::vector<LevelProblem> avail = available_problems(cat, level);
  if (level.select == "list") {
    std::vector<LevelProblem> out;
    for (std::string n : level.problems) {
      if (level.kind == "kernelbench" && n.ends_with(".py")) n.resize(n.size() - 3);
      for (const auto& p : avail)
        if (p.name == n) out.push_back(p);
    }
    return out;
  }
  if (level.select == "glob") {
    std::vector<LevelProblem> out;
    for (const auto& p : avail) {
      // Kernelbench globs are written against the file (level1/*.py); native ones against ids.
      std::string subject = level.kind == "kernelbench" ? p.name + ".py" : p.name;
      if (fnmatch(level.glob.c_str(), subject.c_str(), 0) == 0 ||
          fnmatch(level.glob.c_str(), p.name.c_str(), 0) == 0)
        out.push_back(p);
    }
    return out;
  }
  return avail;
}

namespace {

Catalog load(const std::vector<std::string>& paths, Diagnostics& diags, const OpCatalog& ops,
             std::optional<FileKind> force) {
  Loader ld{diags, ops, {}, {}, {}, {}, {}};
  for (const auto& p : paths) ld.load_path(p, force);
  ld.load_suite_context();
  ld.load_builtin_gpus();
  ld.load_level_problems();
  std::sort(ld.cat.problems.begin(), ld.cat.problems.end(),
            [](const NativeProblem& a, const NativeProblem& b) { return a.loc.file < b.loc.file; });
  ld.check_duplicates(ld.cat.gpus, "gpu target");
  ld.check_duplicates(ld.cat.levels, "level");
  ld.check_duplicates(ld.cat.suites, "suite");
  ld.check_problem_duplicates();
  ld.check_levels();
  ld.check_suites();
  // Sorting by id comes last: refs are parallel to the load order until here.
  sort_by_id(ld.cat.gpus);
  sort_by_id(ld.cat.levels);
  sort_by_id(ld.cat.suites);
  diags.sort();
  return std::move(ld.cat);
}

}  // namespace

Catalog load_catalog(const std::vector<std::string>& paths, Diagnostics& diags,
                     const OpCatalog& ops) {
  return load(paths, diags, ops, std::nullopt);
}

std::string default_repo_root() {
  if (const char* r = std::getenv("KGATE_ROOT"); r && *r) return r;
  return paths::data_dir();  // an installed kgate's share/kgate, else its source tree
}

std::string repo_root_of(const std::string& file) {
  std::error_code ec;
  fs::path p = fs::absolute(file, ec).lexically_normal().parent_path();
  for (; !p.empty(); p = p.parent_path()) {
    if (fs::is_directory(p / "configs", ec)) return p.string();
    if (p == p.parent_path()) break;
  }
  return "";
}

Catalog load_repo_catalog(const std::string& root, Diagnostics& diags) {
  std::vector<std::string> paths;
  for (const char* sub : {"configs", "suites", "kernelbench/native"}) {
    fs::path p = fs::path(root) / sub;
    std::error_code ec;
    if (fs::is_directory(p, ec)) paths.push_back(p.lexically_normal().string());
  }
  return load_catalog(paths, diags);
}

const NativeProblem* find_problem(const Catalog& cat, std::string_view id) {
  auto slash = id.find('/');
  if (slash != std::string_view::npos) {
    const LevelConfig* l = cat.level(id.substr(0, slash));
    if (!l) return nullptr;
    for (const auto& p : available_problems(cat, *l))
      if (p.name == id.substr(slash + 1)) return p.native;
    return nullptr;
  }
  const NativeProblem* found = nullptr;
  for (const auto& p : cat.problems) {
    if (p.id != id) continue;
    if (found && canonical_of(found->loc.file) != canonical_of(p.loc.file))
      return nullptr;  // ambiguous
    found = &p;
  }
  return found;
}

std::vector<const GpuTarget*> matching_gpus(const std::vector<const GpuTarget*>& targets,
                                            const std::string& device_name, const std::string& cc) {
  std::vector<const GpuTarget*> pinned, loose;
  const bool host = cc.empty();
  for (const GpuTarget* g : targets) {
    if ((g->backend == "host") != host) continue;
    if (!g->match_cc.empty() && g->match_cc != cc) continue;
    try {
      std::regex re(g->match_name, std::regex::ECMAScript | std::regex::icase);
      if (!std::regex_search(device_name, re)) continue;
    } catch (const std::regex_error&) {
      continue;  // reported by validation
    }
    (g->match_cc.empty() ? loose : pinned).push_back(g);
  }
  pinned.insert(pinned.end(), loose.begin(), loose.end());
  return pinned;
}

const GpuTarget* match_gpu(const Catalog& cat, const std::string& device_name,
                           const std::string& cc) {
  std::vector<const GpuTarget*> all;
  for (const auto& g : cat.gpus) all.push_back(&g);
  std::vector<const GpuTarget*> m = matching_gpus(all, device_name, cc);
  return m.empty() ? nullptr : m.front();
}

std::vector<const PlanItem*> Plan::for_gpu(std::string_view gpu_id) const {
  std::vector<const PlanItem*> out;
  for (const auto& it : items)
    if (it.gpu.id == gpu_id) out.push_back(&it);
  return out;
}

std::string unavailable_reason(const Catalog& cat, const Suite& suite) {
  std::string why;
  for (const auto& lid : suite.levels)
    if (const LevelConfig* l = cat.level(lid); l && !l->unavailable.empty())
      why += (why.empty() ? "" : "; ") + ("level '" + lid + "' " + l->unavailable + " (" + l->loc.str() + ")");
  return why;
}

Plan plan_suite(const Catalog& cat, const Suite& suite) {
  Diagnostics d;
  Plan plan = plan_suite(cat, suite, d);
  d.throw_if_errors();
  return plan;
}

Plan plan_suite(const Catalog& cat, const Suite& suite, Diagnostics& d) {
  if (std::string why = unavailable_reason(cat, suite); !why.empty())
    d.error(suite.loc, "suite '" + suite.id + "' cannot be used here: " + why);
  std::vector<LevelProblem> problems;
  // Two levels may select the same problem file (a demo subset and "all"): run it once.
  std::set<std::string> taken;
  auto add = [&](const LevelProblem& p) {
    if (taken.insert(canonical_of(p.source)).second) problems.push_back(p);
  };
  for (const auto& lid : suite.levels) {
    const LevelConfig* l = cat.level(lid);
    if (!l) {
      d.error(suite.loc,
              "suite '" + suite.id + "' names level '" + lid + "', which is not defined");
      continue;
    }
    if (!l->unavailable.empty()) continue;  // reported once below
    for (const auto& p : selected_problems(cat, *l)) add(p);
  }
  for (const auto& pid : suite.problems) {
    auto slash = pid.find('/');
    const LevelConfig* l = slash == std::string::npos ? nullptr : cat.level(pid.substr(0, slash));
    bool found = false;
    if (l) {
      for (const auto& p : available_problems(cat, *l))
        if (p.name == pid.substr(slash + 1)) add(p), found = true;
    }
    if (!found)
      d.error(suite.loc,
              "suite '" + suite.id + "' names problem '" + pid + "', which is not defined");
  }
  Plan plan;
  plan.suite = suite;
  for (const auto& gid : suite.gpus) {
    const GpuTarget* g = cat.gpu(gid);
    if (!g) {
      d.error(suite.loc,
              "suite '" + suite.id + "' names GPU target '" + gid + "', which is not defined");
      continue;
    }
    for (const auto& p : problems) {
      PlanItem item;
      item.level = p.level;
      item.problem = p.id;
      item.kind = cat.level(p.level)->kind;
      item.source = p.source;
      item.gpu = *g;
      item.backend = suite.backend == "auto" ? g->backend : suite.backend;
      if (p.native && suite.agent.kind == "reference") {
        item.native = *p.native;
        item.skip_reason = "agent: reference runs KernelBench problems (a reference model against itself)";
      } else if (p.native) {
        item.native = *p.native;
        auto s = p.native->starters.find(item.backend);
        if (s != p.native->starters.end())
          item.starter = s->second;
        else
          item.skip_reason = "no " + item.backend + " starter";
        // Without host_bench the host backend times bench: bounded like a host_bench is
        // (config/loader.cpp), at bench's line, before any worker allocates it.
        const ops::Op* op = item.backend == "host" && item.skip_reason.empty() && p.native->host_bench.empty()
                                ? ops::find_op(p.native->op)
                                : nullptr;
        if (op != nullptr)
          if (std::string why = host_memory_problem(*p.native, *op, p.native->bench, /*timed=*/true); !why.empty())
            d.error(p.native->bench_loc, "'bench' " + why + " (the host backend times bench: this problem has no host_bench)");
        // The CUDA backend times bench on the GPU: bounded by the target's memory, before a
        // worker meets an out-of-memory error on it.
        const ops::Op* dop = item.backend == "cuda" && item.skip_reason.empty() ? ops::find_op(p.native->op) : nullptr;
        if (dop != nullptr)
          if (std::string why = device_memory_problem(*p.native, *dop, p.native->bench, *g); !why.empty())
            d.error(p.native->bench_loc, "'bench' " + why);
      } else {
        const LevelConfig* lv = cat.level(p.level);
        item.native = kernelbench_problem(p.id, p.source, lv->baseline);
        std::error_code ec;
        fs::path start = lv->solutions.empty() ? fs::path() : fs::path(lv->solutions) / (p.name + ".py");
        const bool has_solution = !start.empty() && fs::is_regular_file(start, ec);
        if (suite.agent.kind == "reference" || lv->starter == "reference") {
          // The reference model as its own ModelNew (KernelBench's convention): the A/A mode
          // of `agent: reference`, or the start of an LLM agent's search on any problem.
          item.native->kernelbench_mode = "reference";
          item.starter = item.native->path;
        } else if (lv->starter == "compiled" || (lv->starter == "auto" && !has_solution)) {
          // Dispatch-aware: the search starts from torch.compile's own model, which every
          // problem has; its Triton kernels are the candidates.
          item.native->kernelbench_mode = "compiled";
          if (item.native->kernelbench_baseline == "eager") item.native->kernelbench_baseline = "compile";
          item.starter = item.native->path;
        } else {
          if (has_solution)
            item.starter = start.string();
          else
            item.skip_reason = lv->solutions.empty()
                                   ? "no starting candidate: the level has no 'solutions' directory"
                                   : "no starting candidate " + start.string();
        }
      }
      plan.items.push_back(std::move(item));
    }
  }
  return plan;
}

Plan plan_suite_file(const std::string& suite_path) {
  Diagnostics d;
  Catalog cat = load({suite_path}, d, builtin_op_catalog(), FileKind::kSuite);
  d.throw_if_errors();
  const Suite* s = nullptr;
  for (const auto& x : cat.suites)
    if (canonical_of(x.loc.file) == canonical_of(suite_path)) s = &x;
  if (!s) throw UsageError(suite_path + ": error: not a suite file (suites live under suites/)");
  return plan_suite(cat, *s);
}

}  // namespace kgate::config
