#include "cli/commands.h"

namespace kgate::cli {

ExitCode cmd_doctor(const DoctorOptions&) { return not_available("doctor"); }

}  // namespace kgate::cli
