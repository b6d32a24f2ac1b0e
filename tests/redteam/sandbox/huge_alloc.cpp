// Sandbox red team: asks for three quarters of the machine's memory and touches it (on an
// uncapped worker this pushes the runner into swap or the OOM killer; the host worker's
// address space is capped at half).
// expect: memory | correctness | returned 12
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "@BODY@"

static int cheat(void) {
  const size_t bytes = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE) / 4 * 3;
  void* p = malloc(bytes);
  if (p == NULL) return -1;
  memset(p, 1, bytes);
  free(p);
  return 0;
}
