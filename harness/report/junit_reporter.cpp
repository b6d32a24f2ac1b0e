#include "report/junit_reporter.h"

#include <cstdio>

#include <tinyxml2.h>

#include "report/format.h"
#include "report/record_io.h"

namespace kgate::report {
namespace {

using tinyxml2::XMLDocument;
using tinyxml2::XMLElement;

const char* failure_type(FailureKind k) {
  switch (k) {
    case FailureKind::kCorrectnessRegression: return "CorrectnessRegression";
    case FailureKind::kPerformanceRegression: return "PerformanceRegression";
    case FailureKind::kGateFailure: return "GateFailure";
    default: return nullptr;
  }
}

std::string error_type(const ProblemResult& r) {
  // The problem's own file, starter or base is unusable: a fix in the repository, not on
  // the runner
  if (r.error_kind == kProblemErrorKind) return "ProblemError";
  for (const auto& g : r.gates) {
    if (g.fault == gates::Fault::kTimeout) return "Timeout";
    if (g.fault == gates::Fault::kCrash) return "Crash";
    if (g.fault == gates::Fault::kWorkerError) return "WorkerError";
    if (g.fault == gates::Fault::kCannotJudge) return "CannotJudge";
  }
  // kgate could not judge the problem on this machine (its float64 truth does not fit,
  // say): neither the candidate's fault nor a broken runner
  if (r.reason.rfind(gates::kCannotJudgeProblem, 0) == 0) return "CannotJudge";
  return "InfrastructureError";
}

void set_text_attr(XMLElement* e, const char* name, const std::string& v) {
  e->SetAttribute(name, fmt::xml_safe(v).c_str());
}

void add_property(XMLElement* props, const char* name, const std::string& value) {
  XMLElement* p = props->InsertNewChildElement("property");
  p->SetAttribute("name", name);
  set_text_attr(p, "value", value);
}

std::string problem_text(const ProblemResult& r) {
  std::string t;
  t += "problem: " + r.level + "/" + r.problem + "\n";
  t += "outcome: " + to_string(r.outcome) + "\n";
  t += "baseline (" + (r.baseline_kind.empty() ? std::string("-") : r.baseline_kind) +
       "): " + fmt::us(r.baseline_us) + "\n";
  t += "best: " + fmt::us(r.best_us) + "\n";
  t += "speedup: " + fmt::result_speedup(r.best_us, r.speedup, r.speedup_lo, r.speedup_hi) + "\n";
  if (r.eager_us > 0) t += "eager: " + fmt::us(r.eager_us) + "\n";
  if (r.compile_us > 0) t += "torch.compile: " + fmt::us(r.compile_us) + "\n";
  t += "roofline: " + fmt::pct(r.pct_roofline) + "\n";
  t += "experiments: " + std::to_string(r.experiments) + ", kept: " + std::to_string(r.kept) +
       "\n";
  if (!r.best_commit.empty()) t += "best commit: " + r.best_commit + "\n";
  if (!r.reason.empty()) t += "reason: " + r.reason + "\n";
  t += "seed: " + std::to_string(r.seed) + "\n";
  if (!r.gates.empty()) t += "\n" + gate_table_text(r);
  return t;
}

}  // namespace

std::string gate_table_text(const ProblemResult& r) {
  std::string t;
  char line[512];
  std::snprintf(line, sizeof line, "%-12s %-8s %9s  %-14s %s\n", "gate", "status", "time_s",
                "fault", "case / reason");
  t += line;
  for (const auto& g : r.gates) {
    std::string what = g.failed_case;
    if (!g.reason.empty()) what += (what.empty() ? "" : ": ") + g.reason;
    std::snprintf(line, sizeof line, "%-12s %-8s %9.3f  %-14s ",
                  nlohmann::json(g.gate).get<std::string>().c_str(),
                  nlohmann::json(g.status).get<std::string>().c_str(), g.elapsed_s,
                  nlohmann::json(g.fault).get<std::string>().c_str());
    std::string full = line + what;
    full.erase(full.find_last_not_of(' ') + 1);  // no trailing blanks in the text
    t += full + "\n";
  }
  return t;
}

std::string junit_xml(const Summary& s) {
  const RunInfo& info = *s.info;
  XMLDocument doc;
  doc.InsertEndChild(doc.NewDeclaration());
  XMLElement* root = doc.NewElement("testsuites");
  doc.InsertEndChild(root);
  set_text_attr(root, "name", "kgate " + info.suite);
  // An interrupted run is an error of its own (a testcase "run" in suite "kgate"), and so is
  // each shard a merge lacks (a testcase "shard k/n") and a history that could not be read
  // or written (a testcase "history"): the JUnit fails them as the exit code does, also
  // when every problem planned has a record or a missing shard's cannot be named.
  struct Own {
    std::string name, type, message;
  };
  std::vector<Own> own;
  if (info.interrupted) own.push_back({"run", "interrupted", kInterruptedWhy});
  for (int k : info.missing_shards)
    own.push_back({"shard " + std::to_string(k) + "/" + std::to_string(info.shard.count), "missing-shard",
                   missing_shard_reason(k, info.shard.count) + ": kgate merge was not given its output"});
  for (const std::string& e : info.history_errors) own.push_back({"history", "InfrastructureError", e});
  const int n_own = static_cast<int>(own.size());
  root->SetAttribute("tests", s.overall.problems + n_own);
  root->SetAttribute("failures", s.overall.failures);
  root->SetAttribute("errors", s.overall.errors + n_own);
  root->SetAttribute("time", fmt::num(s.overall.wall_s, 3).c_str());
  if (n_own > 0) {
    XMLElement* suite = root->InsertNewChildElement("testsuite");
    set_text_attr(suite, "name", "kgate");
    suite->SetAttribute("tests", n_own);
    suite->SetAttribute("failures", 0);
    suite->SetAttribute("errors", n_own);
    suite->SetAttribute("skipped", 0);
    suite->SetAttribute("time", "0");
    for (const Own& o : own) {
      XMLElement* tc = suite->InsertNewChildElement("testcase");
      set_text_attr(tc, "classname", "kgate");
      set_text_attr(tc, "name", o.name);
      tc->SetAttribute("time", "0");
      XMLElement* e = tc->InsertNewChildElement("error");
      e->SetAttribute("type", o.type.c_str());
      set_text_attr(e, "message", o.message);
    }
  }

  for (const LevelSummary& lv : s.levels) {
    XMLElement* suite = root->InsertNewChildElement("testsuite");
    set_text_attr(suite, "name", lv.level);
    suite->SetAttribute("tests", lv.problems);
    suite->SetAttribute("failures", lv.failures);
    suite->SetAttribute("errors", lv.errors);
    suite->SetAttribute("skipped", lv.skipped);
    suite->SetAttribute("time", fmt::num(lv.wall_s, 3).c_str());
    if (!info.started_at.empty()) set_text_attr(suite, "timestamp", info.started_at);
    if (!info.env.host.empty()) set_text_attr(suite, "hostname", info.env.host);

    XMLElement* props = suite->InsertNewChildElement("properties");
    add_property(props, "suite", info.suite);
    add_property(props, "run_id", info.run_id);
    add_property(props, "config_hash", info.config_hash);
    add_property(props, "gpu", info.env.gpu);
    add_property(props, "gpu_target", info.env.gpu_target);
    add_property(props, "backend", info.env.backend);
    add_property(props, "driver", info.env.driver);
    add_property(props, "cuda", info.env.cuda);
    add_property(props, "torch", info.env.torch);
    add_property(props, "triton", info.env.triton);
    add_property(props, "kgate_version", info.env.kgate_version);
    add_property(props, "git_sha", info.env.git_sha);
    add_property(props, "seed", std::to_string(info.seed));
    add_property(props, "shard",
                 info.missing_shards.empty()
                     ? std::to_string(info.shard.index) + "/" + std::to_string(info.shard.count)
                     : "merged, " + missing_shards_why(info));

    for (const ProblemRow& row : s.rows) {
      const ProblemResult& r = *row.record;
      if (r.level != lv.level) continue;
      XMLElement* tc = suite->InsertNewChildElement("testcase");
      set_text_attr(tc, "classname", r.level);
      set_text_attr(tc, "name", r.problem);
      tc->SetAttribute("time", fmt::num(r.wall_s, 3).c_str());
      // A failure kind that does not fail the pipeline (a performance regression when the
      // suite does not gate on performance) passes here too and says so in system-out.
      const bool failing = is_failing(row.failure, info.fail_on_performance);
      std::string note;
      if (failure_type(row.failure) && !failing)
        note = "performance regression, not failing (the suite's fail_on.performance is off): " + row.message + "\n";
      if (const char* ft = failure_type(row.failure); ft && failing) {
        XMLElement* f = tc->InsertNewChildElement("failure");
        f->SetAttribute("type", ft);
        set_text_attr(f, "message", row.message);
        if (!r.gates.empty()) f->SetText(fmt::xml_safe(gate_table_text(r)).c_str());
      } else if (is_error(row.failure)) {
        XMLElement* e = tc->InsertNewChildElement("error");
        e->SetAttribute("type", error_type(r).c_str());
        set_text_attr(e, "message", row.message);
      } else if (row.failure == FailureKind::kSkipped) {
        XMLElement* e = tc->InsertNewChildElement("skipped");
        set_text_attr(e, "message", row.message);
      }
      XMLElement* out = tc->InsertNewChildElement("system-out");
      out->SetText(fmt::xml_safe(note + problem_text(r)).c_str());
    }
  }
  tinyxml2::XMLPrinter printer;
  doc.Print(&printer);
  return printer.CStr();
}

}  // namespace kgate::report
