#include "config/loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <regex>
#include <sstream>

#include "config/suggest.h"
#include "config/yaml_map.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/number_format.h"
#include "core/sandbox.h"

namespace fs = std::filesystem;

namespace kgate::config {

std::string_view to_string(FileKind k) {
  switch (k) {
    case FileKind::kGpu:
      return "gpu target";
    case FileKind::kLevel:
      return "level";
    case FileKind::kSuite:
      return "suite";
    case FileKind::kProblem:
      return "native problem";
  }
  return "?";
}

std::optional<FileKind> file_kind_of(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal().parent_path();
  for (; !p.empty(); p = p.parent_path()) {
    std::string dir = p.filename().string();
    if (dir == "gpus") return FileKind::kGpu;
    if (dir == "levels") return FileKind::kLevel;
    if (dir == "suites") return FileKind::kSuite;
    if (dir == "native") return FileKind::kProblem;
    if (p == p.parent_path()) break;  // reached the root
  }
  return std::nullopt;
}

OpCatalog builtin_op_catalog() {
  return {[](std::string_view name) { return ops::find_op(name); }, [] { return ops::op_names(); }};
}

namespace {

SourceLoc file_loc(const std::string& path) { return SourceLoc{path, 0, 0}; }

// Reads and parses one YAML document. Syntax errors become a diagnostic at the parser's
// position; nullopt means there is nothing to validate further.
std::optional<YAML::Node> parse_document(const std::string& path, const std::string& text,
                                         Diagnostics& diags) {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull()) {
      diags.error(SourceLoc{path, 1, 1},
                  "file is empty: expected a mapping starting with 'version: 1'");
      return std::nullopt;
    }
    return root;
  } catch (const YAML::ParserException& e) {
    diags.error(loc_of(path, e.mark), "invalid YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    diags.error(loc_of(path, e.mark), "invalid YAML: " + e.msg);
  }
  return std::nullopt;
}

void check_version(YamlMap& m) {
  int64_t v = 0;
  if (m.read("version", &v, true) && v != kConfigVersion)
    m.error("version", "unsupported version " + std::to_string(v) + " (this kgate reads version " +
                           std::to_string(kConfigVersion) + ")");
}

bool valid_id(const std::string& id) {
  if (id.empty()) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

void read_id(YamlMap& m, std::string* id, SourceLoc* loc) {
  if (!m.read("id", id, true)) return;
  if (loc) *loc = m.loc("id");
  if (!valid_id(*id))
    m.error("id", "id '" + *id + "' may only contain letters, digits, '_', '-' and '.'");
}

// One of a closed set of words; reports with "did you mean".
bool read_choice(YamlMap& m, std::string_view key, std::string* out,
                 const std::vector<std::string>& choices, bool required = false) {
  std::string v;
  if (!m.read(key, &v, required)) return false;
  if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
    m.error(key, "'" + m.name(key) + "' must be one of " + list + ", got '" + v + "'" +
                     did_you_mean(v, choices));
    return false;
  }
  *out = v;
  return true;
}

// Numeric range checks: report at the key and keep the default on failure.
template <typename T>
void read_min(YamlMap& m, std::string_view key, T* out, T min, bool inclusive = true,
              bool required = false) {
  T v{};
  if (!m.read(key, &v, required)) return;
  if (inclusive ? v < min : v <= min) {
    std::ostringstream msg;
    msg << "'" << m.name(key) << "' must be " << (inclusive ? ">= " : "> ") << min << ", got " << v;
    m.error(key, msg.str());
    return;
  }
  *out = v;
}

void read_fraction(YamlMap& m, std::string_view key, double* out, bool allow_one) {
  double v = 0;
  if (!m.read(key, &v)) return;
  if (v <= 0 || (allow_one ? v > 1 : v >= 1)) {
    std::ostringstream msg;
    msg << "'" << m.name(key) << "' must be in (0, 1" << (allow_one ? "]" : ")") << ", got " << v;
    m.error(key, msg.str());
    return;
  }
  *out = v;
}

std::string dir_of(const std::string& path) {
  std::string d = fs::path(path).parent_path().string();
  return d.empty() ? "." : d;
}

// A path written in a file is relative to that file's directory.
std::string resolve_near(const std::string& file, const std::string& rel) {
  fs::path p(rel);
  if (p.is_relative()) p = fs::path(dir_of(file)) / p;
  return p.lexically_normal().string();
}

// `${NAME}` in a path is the environment variable NAME (a KernelBench checkout lives
// wherever the runner keeps it: `root: ${KERNELBENCH}/KernelBench/level1`).
// With `unset`, a variable that is not set is reported there (and "" returned) instead of
// being an error: a level whose checkout is elsewhere is unavailable, not invalid.
std::string expand_env(YamlMap& m, std::string_view key, const std::string& text, std::string* unset = nullptr) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, "${") != 0) {
      out += text[i++];
      continue;
    }
    std::size_t end = text.find('}', i + 2);
    if (end == std::string::npos) {
      m.error(key, "unterminated '${' in '" + text + "'");
      return text;
    }
    std::string name = text.substr(i + 2, end - i - 2);
    const char* v = name.empty() ? nullptr : std::getenv(name.c_str());
    if (!v || !*v) {
      if (unset) *unset = name;
      else m.error(key, "'" + text + "' uses ${" + name + "}, which is not set in the environment");
      return "";
    }
    out += v;
    i = end + 1;
  }
  return out;
}

std::string absolute_of(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return (ec ? fs::path(p) : a).lexically_normal().string();
}

// ---- GPU targets -------------------------------------------------------------------

const std::vector<std::string> kGpuKeys = {"version",     "id",           "name",
                                           "backend",     "match",        "sm_count",
                                           "l2_bytes",    "memory_bytes", "peak_bandwidth_gbps",
                                           "peak_tflops", "notes"};
const std::vector<std::string> kBackends = {"cuda", "host"};
// Tensor-core formats without a DType of their own are valid peak_tflops keys too.
const std::vector<std::string> kPeakNames = {"f16", "bf16", "f32", "f64", "tf32", "fp8", "int8"};

// "" when a device-name pattern is one std::regex compiles within bounds, else why not: a
// name pattern is short, and the standard library's regex compiler reads a repeat count or
// a backreference number into an int without an overflow check (`\99999999999`, found by
// fuzz_config), and recurses once per nesting level.
std::string device_pattern_problem(const std::string& re) {
  constexpr std::size_t kMaxLength = 256;
  if (re.size() > kMaxLength)
    return "is " + std::to_string(re.size()) + " characters long; a device-name pattern has at most " +
           std::to_string(kMaxLength);
  for (std::size_t i = 0; i < re.size(); ++i) {
    const bool backref = re[i] == '\\' && i + 1 < re.size() && std::isdigit(static_cast<unsigned char>(re[i + 1]));
    const bool count = re[i] == '{';
    if (re[i] == '\\' && !backref) {
      ++i;  // an escaped character, never a number's start
      continue;
    }
    if (!backref && !count) continue;
    std::size_t j = i + 1;
    while (j < re.size() && (std::isdigit(static_cast<unsigned char>(re[j])) || (count && re[j] == ','))) {
      std::size_t k = j;
      while (k < re.size() && std::isdigit(static_cast<unsigned char>(re[k]))) ++k;
      if (k - j > 4)
        return std::string("has ") + (backref ? "a backreference number" : "a repeat count") + " of " +
               std::to_string(k - j) + " digits at offset " + std::to_string(j) + " (at most 4)";
      j = k == j ? j + 1 : k;
    }
    i = j - 1;
  }
  return "";
}

GpuTarget parse_gpu(const YAML::Node& root, const std::string& path, Diagnostics& diags) {
  GpuTarget g;
  g.loc = SourceLoc{path, 1, 1};
  YamlMap m(root, path, "", kGpuKeys, diags, g.loc);
  if (!m.valid()) return g;
  check_version(m);
  read_id(m, &g.id, &g.loc);
  m.read("name", &g.name, true);
  read_choice(m, "backend", &g.backend, kBackends, true);
  std::string notes;
  m.read("notes", &notes);

  YAML::Node match;
  if (m.mapping("match", &match, true)) {
    YamlMap mm(match, path, "match.", {"name", "cc"}, diags, m.loc("match"));
    if (mm.read("name", &g.match_name, true)) {
      if (std::string why = device_pattern_problem(g.match_name); !why.empty()) {
        mm.error("name", "'match.name' " + why);
      } else {
        try {
          std::regex re(g.match_name, std::regex::ECMAScript | std::regex::icase);
        } catch (const std::regex_error& e) {
          mm.error("name",
                   "'match.name' is not a valid regular expression: " + std::string(e.what()));
        }
      }
    }
    if (mm.read("cc", &g.match_cc)) {
      static const std::regex kCc(R"(\d+\.\d+)");
      if (!std::regex_match(g.match_cc, kCc))
        mm.error("cc", "'match.cc' must look like '9.0', got '" + g.match_cc + "'");
      else if (g.backend == "host")
        mm.error("cc", "'match.cc' is for cuda targets; a host target has no compute capability");
    }
  }

  // A cuda target's figures feed roofline and flush sizing: all must be given. A host
  // target only needs the bandwidth (a lead until `kgate doctor` measures the runner).
  bool cuda = g.backend == "cuda";
  read_min<int>(m, "sm_count", &g.sm_count, cuda ? 1 : 0, true, cuda);
  read_min<int64_t>(m, "l2_bytes", &g.l2_bytes, cuda ? 1 : 0, true, cuda);
  read_min<int64_t>(m, "memory_bytes", &g.memory_bytes, cuda ? 1 : 0, true, cuda);
  read_min<double>(m, "peak_bandwidth_gbps", &g.peak_bandwidth_gbps, 0.0, false, true);

  YAML::Node peaks;
  if (m.mapping("peak_tflops", &peaks, cuda)) {
    for (const auto& kv : peaks) {
      const YAML::Node key_node = kv.first, value_node = kv.second;
      SourceLoc kloc = loc_of(path, key_node);
      std::string name = key_node.IsScalar() ? key_node.Scalar() : "";
      if (auto d = parse_dtype(name)) name = std::string(kgate::to_string(*d));
      if (std::find(kPeakNames.begin(), kPeakNames.end(), name) == kPeakNames.end()) {
        diags.error(kloc, "unknown format '" +
                              (key_node.IsScalar() ? key_node.Scalar() : describe(key_node)) +
                              "' in 'peak_tflops'" + did_you_mean(name, kPeakNames));
        continue;
      }
      double v = 0;
      if (!value_node.IsScalar() || !parse_double(value_node.Scalar(), &v)) {
        diags.error(loc_of(path, value_node),
                    "'peak_tflops." + name + "' must be a number, got " + describe(value_node));
        continue;
      }
      if (v <= 0) {
        std::ostringstream msg;
        msg << "'peak_tflops." << name << "' must be > 0, got " << v;
        diags.error(loc_of(path, value_node), msg.str());
        continue;
      }
      if (g.peak_tflops.count(name)) {
        diags.error(kloc, "duplicate format '" + name + "' in 'peak_tflops'");
        continue;
      }
      g.peak_tflops[name] = v;
    }
  }
  return g;
}

// ---- levels ------------------------------------------------------------------------

const std::vector<std::string> kLevelKeys = {"version", "id",       "title", "kind",    "root",
                                             "select",  "problems", "glob",  "baseline", "solutions",
                                             "starter"};

LevelConfig parse_level(const YAML::Node& root, const std::string& path, Diagnostics& diags,
                        LevelRefs* refs) {
  LevelConfig l;
  l.loc = SourceLoc{path, 1, 1};
  LevelRefs local;
  LevelRefs& r = refs ? *refs : local;
  YamlMap m(root, path, "", kLevelKeys, diags, l.loc);
  if (!m.valid()) return l;
  check_version(m);
  read_id(m, &l.id, &l.loc);
  r.id = l.loc;
  m.read("title", &l.title);
  // A missing or misspelt kind is one error: the checks that depend on the kind (its
  // problems' files, 'solutions', 'starter') are left out rather than run on a guess.
  if (!read_choice(m, "kind", &l.kind, {"native", "kernelbench"}, true)) l.kind.clear();
  if (m.read("root", &l.root, true)) {
    r.root = m.loc("root");
    std::string unset;
    std::string expanded = expand_env(m, "root", l.root, &unset);
    if (!unset.empty()) {
      l.unavailable = "its root '" + l.root + "' uses ${" + unset + "}, which is not set in the environment";
      l.root.clear();
    } else {
      l.root = resolve_near(path, expanded);
      std::error_code ec;
      if (!fs::is_directory(l.root, ec))
        m.error("root", "level root '" + l.root + "' is not a directory");
    }
  }

  bool has_list = m.read("problems", &l.problems, false, &r.problems);
  bool has_glob = m.read("glob", &l.glob);
  std::string select;
  if (read_choice(m, "select", &select, {"all", "list", "glob"})) {
    l.select = select;
  } else if (!m.has("select")) {
    l.select = has_list ? "list" : has_glob ? "glob" : "all";
  }
  if (l.select == "list" && m.has("select") && !m.has("problems"))
    m.error("select", "'select: list' needs a 'problems' list");
  if (l.select == "list" && has_list && l.problems.empty())
    m.error("problems", "'problems' is empty: the level would select nothing");
  if (l.select == "glob" && m.has("select") && !m.has("glob"))
    m.error("select", "'select: glob' needs a 'glob' pattern");
  if (m.has("problems") && m.has("select") && l.select != "list")
    m.error("problems",
            "'problems' is only used with 'select: list' (select is '" + l.select + "')");
  if (m.has("glob") && m.has("select") && l.select != "glob")
    m.error("glob", "'glob' is only used with 'select: glob' (select is '" + l.select + "')");
  if (has_list && has_glob && !m.has("select"))
    m.error("glob", "give either 'problems' or 'glob', not both");

  if (l.kind == "kernelbench") l.baseline = "compile";
  if (l.kind == "native")
    read_choice(m, "baseline", &l.baseline, {"reference", "starter"});
  else if (l.kind == "kernelbench")
    read_choice(m, "baseline", &l.baseline, {"eager", "compile", "compile-max-autotune"});
  if (m.read("solutions", &l.solutions) && !l.kind.empty()) {
    if (l.kind != "kernelbench") {
      m.error("solutions", "'solutions' is only used by kernelbench levels (starting candidates)");
    } else {
      l.solutions = resolve_near(path, expand_env(m, "solutions", l.solutions));
      std::error_code ec;
      if (!fs::is_directory(l.solutions, ec))
        m.error("solutions", "solutions directory '" + l.solutions + "' is not a directory");
    }
  }
  if (read_choice(m, "starter", &l.starter, {"auto", "compiled", "solutions", "reference"}) && !l.kind.empty()) {
    if (l.kind != "kernelbench")
      m.error("starter", "'starter' is only used by kernelbench levels");
    else if (l.starter == "solutions" && !m.has("solutions"))
      m.error("starter", "'starter: solutions' needs a 'solutions' directory");
  }
  if (l.kind == "kernelbench" && l.starter.empty()) l.starter = "auto";
  return l;
}

// ---- suites ------------------------------------------------------------------------

const std::vector<std::string> kSuiteKeys = {"version",  "id",    "title",       "levels",
                                             "problems", "gpus",  "backend",     "torch_references",
                                             "budget",   "agent", "gates",       "measurement",
                                             "fail_on"};
const std::vector<std::string> kReferenceModes = {"eager", "compile", "compile-max-autotune"};

void parse_budget(YamlMap& m, Budget& b, Diagnostics& diags) {
  YAML::Node n;
  if (!m.mapping("budget", &n)) return;
  YamlMap bm(n, m.file(), "budget.",
             {"max_experiments", "problem_wall_s", "suite_wall_s", "problem_floor_s",
              "max_consecutive_reverts", "target_speedup", "roofline_stop", "screen_slack"},
             diags, m.loc("budget"));
  read_min<int>(bm, "max_experiments", &b.max_experiments, 0);
  read_min<double>(bm, "problem_wall_s", &b.problem_wall_s, 0.0, false);
  read_min<double>(bm, "suite_wall_s", &b.suite_wall_s, 0.0, false);
  read_min<double>(bm, "problem_floor_s", &b.problem_floor_s, 0.0);
  read_min<int>(bm, "max_consecutive_reverts", &b.max_consecutive_reverts, 1);
  read_min<double>(bm, "target_speedup", &b.target_speedup, 1.0, false);
  read_fraction(bm, "roofline_stop", &b.roofline_stop, true);
  read_min<double>(bm, "screen_slack", &b.screen_slack, 0.0);
  if (bm.has("problem_floor_s") && b.problem_floor_s > b.problem_wall_s) {
    std::ostringstream msg;
    msg << "'budget.problem_floor_s' (" << b.problem_floor_s
        << ") is larger than 'budget.problem_wall_s' (" << b.problem_wall_s << ")";
    bm.error("problem_floor_s", msg.str());
  }
}

void parse_agent(YamlMap& m, AgentConfig& a, Diagnostics& diags) {
  YAML::Node n;
  if (!m.mapping("agent", &n)) return;
  YamlMap am(n, m.file(), "agent.",
             {"kind", "command", "timeout_s", "url", "model", "api_key_env", "seed"}, diags,
             m.loc("agent"));
  read_choice(am, "kind", &a.kind, {"tuner", "template", "command", "http", "reference"});
  am.read("command", &a.command);
  read_min<double>(am, "timeout_s", &a.timeout_s, 0.0, false);
  am.read("url", &a.url);
  am.read("model", &a.model);
  if (am.read("api_key_env", &a.api_key_env)) {
    static const std::regex kEnv("[A-Za-z_][A-Za-z0-9_]*");
    if (!std::regex_match(a.api_key_env, kEnv))
      am.error("api_key_env",
               "'agent.api_key_env' names an environment variable (e.g. OPENAI_API_KEY), got '" +
                   a.api_key_env + "'");
  }
  am.read("seed", &a.seed);
  if (a.kind == "command" && a.command.empty())
    diags.error(am.loc("kind"), "'agent.kind: command' needs 'agent.command'");
  if (a.kind == "http") {
    if (a.url.empty()) diags.error(am.loc("kind"), "'agent.kind: http' needs 'agent.url'");
    if (a.model.empty()) diags.error(am.loc("kind"), "'agent.kind: http' needs 'agent.model'");
  }
  if (a.kind != "command" && am.has("command"))
    am.error("command", "'agent.command' is only used with 'agent.kind: command'");
  if (a.kind != "http") {
    for (const char* k : {"url", "model", "api_key_env"})
      if (am.has(k))
        am.error(k, "'agent." + std::string(k) + "' is only used with 'agent.kind: http'");
  }
}

void parse_gates(YamlMap& m, GateThresholds& g, Diagnostics& diags) {
  YAML::Node n;
  if (!m.mapping("gates", &n)) return;
  YamlMap gm(n, m.file(), "gates.",
             {"seeds", "rho", "rho_floor_ulps", "keep_threshold", "regression_threshold", "gamma",
              "confidence", "roofline_slack"},
             diags, m.loc("gates"));
  read_min<int>(gm, "seeds", &g.seeds, 1);
  read_min<double>(gm, "rho", &g.rho, 1.0);
  read_min<double>(gm, "rho_floor_ulps", &g.rho_floor_ulps, 0.0);
  read_min<double>(gm, "keep_threshold", &g.keep_threshold, 1.0);
  read_min<double>(gm, "regression_threshold", &g.regression_threshold, 1.0);
  read_min<double>(gm, "gamma", &g.gamma, 1.0);
  read_fraction(gm, "confidence", &g.confidence, false);
  read_fraction(gm, "roofline_slack", &g.roofline_slack, true);
}

void parse_measurement(YamlMap& m, MeasurementConfig& c, Diagnostics& diags) {
  YAML::Node n;
  if (!m.mapping("measurement", &n)) return;
  YamlMap mm(n, m.file(), "measurement.",
             {"min_time_s", "max_time_s", "min_samples", "target_rse", "flush_l2"}, diags,
             m.loc("measurement"));
  read_min<double>(mm, "min_time_s", &c.min_time_s, 0.0, false);
  read_min<double>(mm, "max_time_s", &c.max_time_s, 0.0, false);
  read_min<int>(mm, "min_samples", &c.min_samples, 1);
  read_fraction(mm, "target_rse", &c.target_rse, false);
  mm.read("flush_l2", &c.flush_l2);
  if (c.max_time_s < c.min_time_s) {
    std::ostringstream msg;
    msg << "'measurement.max_time_s' (" << c.max_time_s
        << ") is smaller than 'measurement.min_time_s' (" << c.min_time_s << ")";
    mm.error(mm.has("max_time_s") ? "max_time_s" : "min_time_s", msg.str());
  }
}

void parse_fail_on(YamlMap& m, FailOn& f, Diagnostics& diags) {
  YAML::Node n;
  if (!m.mapping("fail_on", &n)) return;
  YamlMap fm(n, m.file(), "fail_on.", {"correctness", "performance"}, diags, m.loc("fail_on"));
  bool c = true;
  if (fm.read("correctness", &c) && !c)
    fm.error(
        "correctness",
        "'fail_on.correctness' cannot be false: a correctness failure always fails the pipeline");
  fm.read("performance", &f.performance);
}

Suite parse_suite(const YAML::Node& root, const std::string& path, Diagnostics& diags,
                  SuiteRefs* refs) {
  Suite s;
  s.loc = SourceLoc{path, 1, 1};
  SuiteRefs local;
  SuiteRefs& r = refs ? *refs : local;
  YamlMap m(root, path, "", kSuiteKeys, diags, s.loc);
  if (!m.valid()) return s;
  check_version(m);
  read_id(m, &s.id, &s.loc);
  r.id = s.loc;
  m.read("title", &s.title);
  m.read("levels", &s.levels, false, &r.levels);
  m.read("problems", &s.problems, false, &r.problems);
  if (m.read("gpus", &s.gpus, true, &r.gpus) && s.gpus.empty())
    m.error("gpus", "'gpus' is empty: name at least one GPU target from configs/gpus");
  if (!m.has("levels") && !m.has("problems"))
    diags.error(m.where(), "the suite runs nothing: give 'levels' or 'problems'");
  else if (s.levels.empty() && s.problems.empty() && (m.has("levels") || m.has("problems")))
    diags.error(m.has("levels") ? m.loc("levels") : m.loc("problems"),
                "the suite runs nothing: 'levels' and 'problems' are empty");
  if (read_choice(m, "backend", &s.backend, {"auto", "host", "cuda"})) r.backend = m.loc("backend");
  std::vector<std::string> modes;
  if (m.read("torch_references", &modes)) {
    std::vector<std::string>& given = s.torch_references.emplace();
    for (const std::string& mode : modes) {
      if (std::find(kReferenceModes.begin(), kReferenceModes.end(), mode) == kReferenceModes.end()) {
        m.error("torch_references", "'torch_references' lists '" + mode +
                                        "': each must be eager, compile or compile-max-autotune" +
                                        did_you_mean(mode, kReferenceModes));
      } else if (std::find(given.begin(), given.end(), mode) == given.end()) {
        given.push_back(mode);
      }
    }
  }
  parse_budget(m, s.budget, diags);
  parse_agent(m, s.agent, diags);
  parse_gates(m, s.gates, diags);
  parse_measurement(m, s.measurement, diags);
  parse_fail_on(m, s.fail_on, diags);
  return s;
}

// ---- native problems ---------------------------------------------------------------

const std::vector<std::string> kProblemKeys = {
    "version", "id",          "title",     "op",       "bench",     "host_bench", "sweep",
    "dtypes",  "bench_dtype", "tolerance", "starters", "baselines", "reference"};
const std::vector<std::string> kDtypeNames = {"f16", "bf16", "f32", "f64", "i32", "i64"};

std::string dims_str(const ops::Dims& d) {
  std::string s = "{";
  for (const auto& [k, v] : d) s += (s.size() > 1 ? ", " : "") + k + ": " + std::to_string(v);
  return s + "}";
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// One shape: every dimension the op names, each >= 1, no others; then the op's own check.
// Largest tensor a problem may declare (elements): past it the sizes are a typo, and
// before it the products must not wrap around int64 (a wrapped size read as small).
constexpr int64_t kMaxTensorElements = int64_t{1} << 36;

// "" when every tensor of the op at `d` has a size that fits, else which does not.
std::string element_count_problem(const ops::Op& op, const ops::Dims& d) {
  std::vector<ops::TensorDecl> all = op.inputs();
  for (const auto& t : op.outputs()) all.push_back(t);
  for (const auto& t : all) {
    int64_t n = 1;
    for (int64_t s : op.shape_of(t, d))
      if (__builtin_mul_overflow(n, s, &n) || n > kMaxTensorElements)
        return "tensor '" + t.name + "' would hold more than 2^36 elements (kgate's cap on one tensor)";
  }
  return "";
}

std::optional<ops::Dims> parse_dims(const YAML::Node& n, const std::string& what, const ops::Op* op,
                                    const std::string& path, Diagnostics& diags) {
  SourceLoc where = loc_of(path, n);
  if (!n.IsMap()) {
    diags.error(where, "'" + what + "' must be a mapping of dimensions, got " + describe(n));
    return std::nullopt;
  }
  std::vector<std::string> names = op ? op->dims() : std::vector<std::string>{};
  ops::Dims d;
  bool ok = true;
  for (const auto& kv : n) {
    const YAML::Node key_node = kv.first, value_node = kv.second;
    SourceLoc kloc = loc_of(path, key_node);
    std::string key = key_node.IsScalar() ? key_node.Scalar() : describe(key_node);
    if (op && std::find(names.begin(), names.end(), key) == names.end()) {
      diags.error(kloc, "unknown dimension '" + key + "' in '" + what + "' (" +
                            std::string(op->name()) + " takes " + join(names) + ")" +
                            did_you_mean(key, names));
      ok = false;
      continue;
    }
    if (d.count(key)) {
      diags.error(kloc, "duplicate dimension '" + key + "' in '" + what + "'");
      ok = false;
      continue;
    }
    int64_t v = 0;
    if (!value_node.IsScalar() || !parse_int(value_node.Scalar(), &v)) {
      diags.error(loc_of(path, value_node),
                  "'" + what + "." + key + "' must be an integer, got " + describe(value_node));
      ok = false;
      continue;
    }
    if (v < 1) {
      diags.error(loc_of(path, value_node),
                  "'" + what + "." + key + "' must be >= 1, got " + std::to_string(v));
      ok = false;
      continue;
    }
    d[key] = v;
  }
  if (!op) return ok ? std::optional<ops::Dims>(d) : std::nullopt;
  for (const auto& name : names) {
    if (!d.count(name) && ok) {
      // Only meaningful when the keys given were otherwise fine.
      diags.error(where, "'" + what + "' is missing dimension '" + name + "' (" +
                             std::string(op->name()) + " takes " + join(names) + ")");
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  std::string why = op->check_dims(d);
  if (why.empty()) why = element_count_problem(*op, d);
  if (!why.empty()) {
    diags.error(where, "'" + what + "' " + dims_str(d) + " is not valid for " +
                           std::string(op->name()) + ": " + why);
    return std::nullopt;
  }
  return d;
}

// backend -> file, relative to the yaml, which must exist.
void parse_sources(YamlMap& m, std::string_view key, std::map<std::string, std::string>* out,
                   bool required, Diagnostics& diags) {
  YAML::Node n;
  if (!m.mapping(key, &n, required)) return;
  std::string what(key);
  for (const auto& kv : n) {
    const YAML::Node key_node = kv.first, value_node = kv.second;
    SourceLoc kloc = loc_of(m.file(), key_node);
    std::string backend = key_node.IsScalar() ? key_node.Scalar() : describe(key_node);
    if (std::find(kBackends.begin(), kBackends.end(), backend) == kBackends.end()) {
      diags.error(kloc, "unknown backend '" + backend + "' in '" + what +
                            "' (backends: cuda, host)" + did_you_mean(backend, kBackends));
      continue;
    }
    SourceLoc vloc = loc_of(m.file(), value_node);
    if (!value_node.IsScalar()) {
      diags.error(
          vloc, "'" + what + "." + backend + "' must be a file path, got " + describe(value_node));
      continue;
    }
    std::string rel = value_node.Scalar();
    std::string p = resolve_near(m.file(), rel);
    std::string ext = fs::path(rel).extension().string();
    bool ext_ok = backend == "cuda"
                      ? ext == ".cu"
                      : (ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".c");
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      diags.error(vloc, "'" + what + "." + backend + "': file '" + p + "' does not exist");
    } else if (!ext_ok) {
      diags.error(vloc, "'" + what + "." + backend + "': a " + backend + " source must end in " +
                            (backend == "cuda" ? ".cu" : ".cpp"));
    }
    if (out->count(backend)) {
      diags.error(kloc, "duplicate backend '" + backend + "' in '" + what + "'");
      continue;
    }
    (*out)[backend] = absolute_of(p);
  }
  if (required && out->empty() && n.IsMap() && n.size() == 0)
    m.error(key, "'" + what + "' is empty: a problem needs at least one starter kernel");
}

std::optional<DType> dtype_at(const YAML::Node& n, const std::string& what, const std::string& path,
                              Diagnostics& diags) {
  if (!n.IsScalar()) {
    diags.error(loc_of(path, n), "'" + what + "' must be a dtype name, got " + describe(n));
    return std::nullopt;
  }
  auto d = parse_dtype(n.Scalar());
  if (!d)
    diags.error(loc_of(path, n), "unknown dtype '" + n.Scalar() + "' in '" + what +
                                     "' (dtypes: " + join(kDtypeNames) + ")" +
                                     did_you_mean(n.Scalar(), kDtypeNames));
  return d;
}

}  // namespace

namespace {

// Bytes one shape of `p` holds: its inputs and outputs (two of each output when `timed`:
// the baseline's and the candidate's) in the timed dtype, else in the widest a check
// draws; with `truth`, each output's float64 truth as well.
long double shape_bytes(const NativeProblem& p, const ops::Op& op, const ops::Dims& d, bool timed, bool truth) {
  std::size_t widest = dtype_size(p.bench_dtype);
  if (!timed)
    for (DType t : p.dtypes) widest = std::max(widest, dtype_size(t));
  long double bytes = 0;
  auto add = [&](const ops::TensorDecl& t, int copies, bool with_truth) {
    long double n = 1;
    for (int64_t s : op.shape_of(t, d)) n *= static_cast<long double>(s);
    const std::size_t size = t.fixed_dtype ? dtype_size(*t.fixed_dtype) : widest;
    bytes += n * static_cast<long double>(size) * copies + (with_truth ? n * 8 : 0);
  };
  for (const auto& t : op.inputs()) add(t, 1, false);
  for (const auto& t : op.outputs()) add(t, timed ? 2 : 1, truth);
  return bytes;
}

}  // namespace

std::string host_memory_problem(const NativeProblem& p, const ops::Op& op, const ops::Dims& d, bool timed) {
  const long double bytes = shape_bytes(p, op, d, timed, /*truth=*/true);
  const std::uint64_t cap = core::host_address_space_cap();
  const std::uint64_t avail = core::host_memory_available();
  const bool by_cap = cap > 0 && (avail == 0 || cap <= avail);
  const std::uint64_t limit = by_cap ? cap : avail;
  if (limit == 0 || bytes <= static_cast<long double>(limit)) return "";
  return "needs " + core::fmt_bytes(bytes) + " at " + dims_str(d) +
         (timed ? " (inputs, two outputs and their float64 truth)" : " (inputs, an output and its float64 truth)") +
         ", more than the " + core::fmt_bytes(static_cast<long double>(limit)) +
         (by_cap ? " a host worker may map here (half of this machine's memory; KGATE_SANDBOX_MEMORY_MB sets it)"
                 : " this machine has available (MemAvailable in /proc/meminfo)");
}

std::string device_memory_problem(const NativeProblem& p, const ops::Op& op, const ops::Dims& d,
                                  int64_t memory_bytes, const std::string& whose) {
  if (memory_bytes <= 0) return "";
  const long double bytes = shape_bytes(p, op, d, /*timed=*/true, /*truth=*/false);
  if (bytes <= static_cast<long double>(memory_bytes)) return "";
  return "needs " + core::fmt_bytes(bytes) + " of GPU memory at " + dims_str(d) +
         " (inputs and two outputs), more than the " + core::fmt_bytes(static_cast<long double>(memory_bytes)) + " of " +
         whose;
}

std::string device_memory_problem(const NativeProblem& p, const ops::Op& op, const ops::Dims& d,
                                  const GpuTarget& gpu) {
  return device_memory_problem(p, op, d, gpu.memory_bytes, gpu.id + " (memory_bytes in " + gpu.loc.file + ")");
}

namespace {

NativeProblem parse_problem(const YAML::Node& root, const std::string& path, Diagnostics& diags,
                            const OpCatalog& ops_catalog) {
  NativeProblem p;
  p.loc = SourceLoc{path, 1, 1};
  YamlMap m(root, path, "", kProblemKeys, diags, p.loc);
  if (!m.valid()) return p;
  check_version(m);
  read_id(m, &p.id, &p.loc);
  m.read("title", &p.title, true);

  const ops::Op* op = nullptr;
  bool op_known = false;  // false: skip dimension checks (the op's error is enough)
  if (m.read("op", &p.op, true)) {
    op = ops_catalog.find(p.op);
    if (op == nullptr) {
      std::vector<std::string> names = ops_catalog.names();
      m.error("op", "unknown op '" + p.op + "' (built-in ops: " + join(names) + ")" +
                        did_you_mean(p.op, names));
    } else {
      op_known = true;
    }
  }

  YAML::Node n;
  if (m.mapping("bench", &n, true)) {
    p.bench_loc = loc_of(path, n);
    if (auto d = parse_dims(n, "bench", op, path, diags); d && op_known) p.bench = *d;
  }
  SourceLoc& host_bench_loc = p.host_bench_loc;  // a location, not the node: `n` is reused below
  if (m.mapping("host_bench", &n)) {
    host_bench_loc = loc_of(path, n);
    if (auto d = parse_dims(n, "host_bench", op, path, diags); d && op_known) p.host_bench = *d;
  }
  std::vector<SourceLoc> sweep_locs;  // of each shape in p.sweep, for the memory check below
  if (m.sequence("sweep", &n, true)) {
    if (n.size() == 0) m.error("sweep", "'sweep' is empty: list at least one correctness shape");
    int i = 0;
    for (const auto& shape : n) {
      if (auto d = parse_dims(shape, "sweep[" + std::to_string(i) + "]", op, path, diags);
          d && op_known) {
        p.sweep.push_back(*d);
        sweep_locs.push_back(loc_of(path, shape));
      }
      ++i;
    }
  }

  if (m.sequence("dtypes", &n, true)) {
    if (n.size() == 0) m.error("dtypes", "'dtypes' is empty: list at least one dtype");
    for (const auto& item : n) {
      auto d = dtype_at(item, "dtypes", path, diags);
      if (!d) continue;
      if (std::find(p.dtypes.begin(), p.dtypes.end(), *d) != p.dtypes.end()) {
        diags.error(loc_of(path, item),
                    "duplicate dtype '" + std::string(kgate::to_string(*d)) + "' in 'dtypes'");
        continue;
      }
      p.dtypes.push_back(*d);
    }
  }
  auto dtype_names = [&] {
    std::vector<std::string> v;
    for (DType d : p.dtypes) v.emplace_back(kgate::to_string(d));
    return v;
  };
  std::string bench_dtype;
  if (m.read("bench_dtype", &bench_dtype, true)) {
    if (auto d = dtype_at(m.get("bench_dtype"), "bench_dtype", path, diags)) {
      p.bench_dtype = *d;
      if (!p.dtypes.empty() && std::find(p.dtypes.begin(), p.dtypes.end(), *d) == p.dtypes.end())
        m.error("bench_dtype", "bench_dtype '" + std::string(kgate::to_string(*d)) +
                                   "' is not one of dtypes [" + join(dtype_names()) + "]");
    }
  }

  // The host backend holds the inputs, two outputs (baseline, candidate) and their float64
  // truth at host_bench in one worker, and a sweep shape's inputs, output and truth: sizes
  // past the worker's address-space cap or this machine's available memory would fail at
  // the first check or timing, after the whole search was set up (or swap the runner).
  // Refused here instead, with the numbers.
  if (op_known && !p.host_bench.empty()) {
    if (std::string why = host_memory_problem(p, *op, p.host_bench, /*timed=*/true); !why.empty())
      diags.error(host_bench_loc, "'host_bench' " + why);
  }
  if (op_known) {
    for (std::size_t i = 0; i < p.sweep.size(); ++i)
      if (std::string why = host_memory_problem(p, *op, p.sweep[i], /*timed=*/false); !why.empty()) {
        diags.error(sweep_locs[i], "'sweep' " + why);
        break;  // the larger shapes after it say the same
      }
  }

  if (m.mapping("tolerance", &n)) {
    for (const auto& kv : n) {
      const YAML::Node key_node = kv.first, value_node = kv.second;
      auto d = dtype_at(key_node, "tolerance", path, diags);
      if (!d) continue;
      std::string dn(kgate::to_string(*d));
      if (!p.dtypes.empty() && std::find(p.dtypes.begin(), p.dtypes.end(), *d) == p.dtypes.end())
        diags.error(
            loc_of(path, key_node),
            "tolerance for '" + dn + "', which is not one of dtypes [" + join(dtype_names()) + "]");
      ops::Tolerance t = op ? op->default_tolerance(*d) : ops::Tolerance{};
      YamlMap tm(value_node, path, "tolerance." + dn + ".", {"atol", "rtol"}, diags,
                 loc_of(path, key_node));
      if (!tm.valid()) continue;
      if (!tm.has("atol") && !tm.has("rtol"))
        diags.error(tm.where(), "'tolerance." + dn + "' needs 'atol' and/or 'rtol'");
      read_min<double>(tm, "atol", &t.atol, 0.0);
      read_min<double>(tm, "rtol", &t.rtol, 0.0);
      if (p.tolerance.count(*d)) {
        diags.error(loc_of(path, key_node), "duplicate dtype '" + dn + "' in 'tolerance'");
        continue;
      }
      p.tolerance[*d] = t;
    }
  }

  parse_sources(m, "starters", &p.starters, true, diags);
  parse_sources(m, "baselines", &p.baselines, false, diags);
  for (const auto& [backend, file] : p.baselines)
    if (!p.starters.count(backend))
      diags.error(m.loc("baselines"), "baseline for backend '" + backend +
                                          "' but no starter for it: there is nothing to compare");

  std::string ref;
  if (m.read("reference", &ref)) {
    std::string rp = resolve_near(path, ref);
    std::error_code ec;
    if (!fs::is_regular_file(rp, ec))
      m.error("reference", "reference file '" + rp + "' does not exist");
    p.reference_source = absolute_of(rp);
  }
  return p;
}

// The file's bytes, or nullopt (reported) when it cannot be read. Regular files only, and
// a config is a few KB: /dev/zero, a FIFO or a stray multi-GB file is a clear error at the
// path, never an unbounded (or blocking) read.
std::optional<std::string> read_text(const std::string& path, Diagnostics& diags) {
  core::ReadResult text = core::read_file(path, core::kConfigReadCap);
  if (!text.ok()) {
    diags.error(file_loc(path), "cannot read file: " + text.error);
    return std::nullopt;
  }
  return std::move(text.bytes);
}

template <typename T, typename F>
std::optional<T> parse_text(const std::string& path, const std::string& text, Diagnostics& diags,
                            F&& parse) {
  auto root = parse_document(path, text, diags);
  if (!root) return std::nullopt;
  return parse(*root);
}

template <typename T>
T strict(std::optional<T> v, const Diagnostics& diags) {
  diags.throw_if_errors();
  return std::move(*v);
}

}  // namespace

std::optional<FileKind> file_kind_by_keys(const std::string& path, Diagnostics* diags) {
  // Read and parsed as every config is (read_text, parse_document): a file that cannot be
  // read or is not YAML gets that error, at its position, in `diags` when one is given.
  Diagnostics local;
  Diagnostics& d = diags ? *diags : local;
  const std::optional<std::string> text = read_text(path, d);
  if (!text) return std::nullopt;
  const std::optional<YAML::Node> doc = parse_document(path, *text, d);
  if (!doc) return std::nullopt;
  const YAML::Node& root = *doc;
  if (!root.IsMap()) return std::nullopt;
  // A kind's own keys: those of its parser's key list that no other kind's list has (a
  // suite's `levels`, a GPU target's `match`, a level's `root`, a problem's `op`; `id`,
  // `backend` or `problems` say nothing).
  static const std::vector<std::pair<FileKind, const std::vector<std::string>*>> kKeys = {
      {FileKind::kSuite, &kSuiteKeys}, {FileKind::kGpu, &kGpuKeys},
      {FileKind::kLevel, &kLevelKeys}, {FileKind::kProblem, &kProblemKeys}};
  auto owned_by = [](const std::string& key) -> std::optional<FileKind> {
    std::optional<FileKind> owner;
    for (const auto& [kind, keys] : kKeys) {
      if (std::find(keys->begin(), keys->end(), key) == keys->end()) continue;
      if (owner) return std::nullopt;  // shared by two kinds
      owner = kind;
    }
    return owner;
  };
  std::optional<FileKind> found;
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) continue;
    const std::optional<FileKind> k = owned_by(kv.first.Scalar());
    if (!k) continue;
    if (found && *found != *k) return std::nullopt;  // keys of two kinds: say so rather than guess
    found = k;
  }
  return found;
}

std::optional<GpuTarget> parse_gpu_text(const std::string& path, const std::string& text,
                                        Diagnostics& diags) {
  return parse_text<GpuTarget>(path, text, diags,
                               [&](const YAML::Node& n) { return parse_gpu(n, path, diags); });
}

std::optional<LevelConfig> parse_level_text(const std::string& path, const std::string& text,
                                            Diagnostics& diags, LevelRefs* refs) {
  return parse_text<LevelConfig>(
      path, text, diags, [&](const YAML::Node& n) { return parse_level(n, path, diags, refs); });
}

std::optional<Suite> parse_suite_text(const std::string& path, const std::string& text,
                                      Diagnostics& diags, SuiteRefs* refs) {
  return parse_text<Suite>(path, text, diags,
                           [&](const YAML::Node& n) { return parse_suite(n, path, diags, refs); });
}

std::optional<NativeProblem> parse_native_problem_text(const std::string& path,
                                                       const std::string& text, Diagnostics& diags,
                                                       const OpCatalog& ops_catalog) {
  return parse_text<NativeProblem>(path, text, diags, [&](const YAML::Node& n) {
    return parse_problem(n, path, diags, ops_catalog);
  });
}

std::optional<GpuTarget> parse_gpu_file(const std::string& path, Diagnostics& diags) {
  auto text = read_text(path, diags);
  if (!text) return std::nullopt;
  return parse_gpu_text(path, *text, diags);
}

std::optional<LevelConfig> parse_level_file(const std::string& path, Diagnostics& diags,
                                            LevelRefs* refs) {
  auto text = read_text(path, diags);
  if (!text) return std::nullopt;
  return parse_level_text(path, *text, diags, refs);
}

std::optional<Suite> parse_suite_file(const std::string& path, Diagnostics& diags,
                                      SuiteRefs* refs) {
  auto text = read_text(path, diags);
  if (!text) return std::nullopt;
  return parse_suite_text(path, *text, diags, refs);
}

std::optional<NativeProblem> parse_native_problem_file(const std::string& path, Diagnostics& diags,
                                                       const OpCatalog& ops_catalog) {
  auto text = read_text(path, diags);
  if (!text) return std::nullopt;
  return parse_native_problem_text(path, *text, diags, ops_catalog);
}

std::optional<NativeProblem> parse_native_problem_file(const std::string& path,
                                                       Diagnostics& diags) {
  return parse_native_problem_file(path, diags, builtin_op_catalog());
}

GpuTarget load_gpu_target(const std::string& path) {
  Diagnostics d;
  auto v = parse_gpu_file(path, d);
  return strict(std::move(v), d);
}

LevelConfig load_level(const std::string& path) {
  Diagnostics d;
  auto v = parse_level_file(path, d);
  return strict(std::move(v), d);
}

Suite load_suite(const std::string& path) {
  Diagnostics d;
  auto v = parse_suite_file(path, d);
  return strict(std::move(v), d);
}

NativeProblem load_native_problem(const std::string& path) {
  Diagnostics d;
  auto v = parse_native_problem_file(path, d);
  return strict(std::move(v), d);
}

}  // namespace kgate::config
