#include "cli/commands.h"

namespace kgate::cli {

ExitCode cmd_check(const CheckOptions&) { return not_available("check"); }

}  // namespace kgate::cli
