#include "cli/commands.h"

namespace kgate::cli {

ExitCode cmd_merge(const MergeOptions&) { return not_available("merge"); }

}  // namespace kgate::cli
