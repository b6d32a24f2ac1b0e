// libFuzzer target: the run journal reader (harness/search/journal.h), as `kgate run
// --resume` reads OUT/journal.jsonl (search/suite_run.cpp, open_journal and replay).
//
// The input is the journal file's bytes. Journal::parse() reads the lines; the header
// fields and every event are then decoded as the resume does: the header's run_id, seed,
// started_at, suite and backend; an `experiment` event as an ExperimentRecord; a
// `problem_done` event's result as a report::ProblemResult.
// Contract (journal.h, suite_run.cpp): a damaged journal is a kgate::InfraError or
// kgate::UsageError naming path:line; an event whose fields do not decode is an
// nlohmann::json::exception, which the replay turns into an InfraError at its line.
// Anything else escaping, a crash or a sanitizer report is a bug in the reader.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "report/record.h"
#include "search/experiment_record.h"
#include "search/journal.h"

namespace {

using kgate::search::Journal;
using json = nlohmann::json;

// One event as SuiteRun::Impl::replay_event reads it (the problem taken as in the plan).
void decode_event(const json& e) {
  try {
    const std::string kind = e.value("event", "");
    (void)e.value("problem", "");
    if (kind == "experiment") {
      auto r = e.get<kgate::search::ExperimentRecord>();
      (void)kgate::search::results_tsv_row(r);
    } else if (kind == "problem_done") {
      const json& res = e.at("result");
      if (!res.is_object() || !res.contains("outcome")) return;  // InfraError in replay
      (void)res.at("outcome").get<std::string>();
      if (e.value("infra", false)) {
        (void)res.value("reason", std::string());
        return;
      }
      auto r = res.get<kgate::report::ProblemResult>();
      (void)json(r).dump(-1, ' ', false, json::error_handler_t::replace);
    }
  } catch (const json::exception&) {
    // replay(): "<path>:<line>: error: <event> event does not parse (...)", an InfraError
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  Journal::Contents c;
  try {
    c = Journal::parse(bytes, "fuzz/journal.jsonl");
  } catch (const kgate::InfraError&) {
    return 0;
  } catch (const kgate::UsageError&) {
    return 0;
  }
  if (!c.header.is_null()) {
    // open_journal() on --resume, outside replay's catch.
    (void)c.header.value("run_id", "");
    (void)c.header.value("seed", uint64_t{0});
    (void)c.header.value("started_at", "");
    (void)c.header.value("suite", "");
    (void)c.header.value("backend", "");
  }
  for (const auto& e : c.events) decode_event(e);
  return 0;
}
