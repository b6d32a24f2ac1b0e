// Points the tests at the binaries of this build when ctest did not pass them in the
// environment (gtest_discover_tests applies only the first entry of an ENVIRONMENT list).
// Values already in the environment win.
#include <cstdlib>

namespace {
struct DefaultTestEnvironment {
  DefaultTestEnvironment() {
    setenv("KGATE_BIN", KGATE_DEFAULT_BIN, 0);
    setenv("KGATE_NATIVE_BIN", KGATE_DEFAULT_NATIVE_BIN, 0);
  }
} g_default_test_environment;
}  // namespace
