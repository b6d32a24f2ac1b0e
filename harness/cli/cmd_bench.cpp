#include "cli/commands.h"

namespace kgate::cli {

ExitCode cmd_bench(const BenchOptions&) { return not_available("bench"); }

}  // namespace kgate::cli
