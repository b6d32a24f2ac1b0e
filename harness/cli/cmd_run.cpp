#include "cli/commands.h"

namespace kgate::cli {

ExitCode cmd_run(const RunOptions&) { return not_available("run"); }

}  // namespace kgate::cli
