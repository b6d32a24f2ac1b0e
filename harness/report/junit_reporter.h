#pragma once
// JUnit XML (tinyxml2) from a Summary: a testsuite per level, a testcase per problem,
// <failure type="CorrectnessRegression|PerformanceRegression|GateFailure">, <error> for
// crash/timeout/infrastructure, <skipped>; suite <properties> with the environment and a
// per-testcase <system-out> gate table. Valid against Jenkins' junit-10.xsd.
#include <string>

#include "report/summary.h"

namespace kgate::report {

std::string junit_xml(const Summary& s);

// The fixed-width gate table of one problem (also used in the Markdown details).
std::string gate_table_text(const ProblemResult& r);

}  // namespace kgate::report
