#include "cli/commands.h"

namespace kgate::cli {

ExitCode cmd_validate(const ValidateOptions&) { return not_available("validate"); }

}  // namespace kgate::cli
