// Sandbox red team: sends SIGKILL to the worker's parent, kgate itself.
// expect: signals | kgate survives, and the candidate passes
#include <signal.h>
#include <unistd.h>

#include "@BODY@"

static int cheat(void) {
  int (*k)(pid_t, int) = kill;
  return k(getppid(), SIGKILL) == 0;
}
