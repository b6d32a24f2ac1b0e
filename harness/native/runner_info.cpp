// Placeholder translation unit so kgate_native_lib exists before the runner lands.
namespace kgate::native {
const char* runner_name() { return "kgate-native"; }
}  // namespace kgate::native
