// kgate-native: the native runner (placeholder until the runner lands).
#include <cstdio>
int main() {
  std::fprintf(stderr, "kgate-native: not available yet\n");
  return 2;
}
