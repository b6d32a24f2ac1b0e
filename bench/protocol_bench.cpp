// Parsing a worker's check response: the orchestrator reads one per candidate, with a
// case per seed x shape x dtype x distribution (hundreds in a full sweep).
#include <string>

#include <benchmark/benchmark.h>

#include "protocol/messages.h"

namespace {

using namespace kgate::protocol;

std::string check_response_line(int cases) {
  CheckResult r;
  for (int i = 0; i < cases; ++i) {
    CaseResult c;
    c.case_id = "seed=" + std::to_string(1000 + i) + "/R=1023,C=4097/f16/signed";
    c.elapsed_ms = 0.25 + i;
    for (const char* name : {"y", "stats"}) {
      OutputError e;
      e.name = name;
      e.max_abs_err = 1e-3 * i;
      e.max_rel_err = 2e-3;
      e.rel_l2_err = 1e-4;
      e.worst_index = 17 * i;
      e.worst_got = 0.5;
      e.worst_want = 0.53;
      c.outputs.push_back(e);
    }
    r.cases.push_back(c);
  }
  return make_ok(42, Json(r));
}

void BM_ParseCheckResponse(benchmark::State& state) {
  const std::string line = check_response_line(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    Response resp;
    std::string err;
    if (!parse_response(line, &resp, &err)) state.SkipWithError(err.c_str());
    CheckResult r = resp.result.get<CheckResult>();
    benchmark::DoNotOptimize(r.cases.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(line.size()));
  state.counters["cases"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_ParseCheckResponse)->Arg(16)->Arg(256);

}  // namespace
