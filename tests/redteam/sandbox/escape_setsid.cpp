// Sandbox red team: forks a child into a session of its own (out of the worker's process
// group, so a group kill at the deadline would miss it), which lingers forever.
// expect: processes | correctness | crash: sandbox: a process left the worker's process group
#include <unistd.h>

#include "@BODY@"

static int started = 0;

static int cheat(void) {
  if (started) return 0;
  started = 1;
  pid_t (*fk)(void) = fork;
  if (fk() == 0) {
    setsid();
    for (;;) pause();
  }
  return 0;
}
