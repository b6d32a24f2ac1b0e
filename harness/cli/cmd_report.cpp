#include "cli/commands.h"

namespace kgate::cli {

ExitCode cmd_report(const ReportOptions&) { return not_available("report"); }

}  // namespace kgate::cli
