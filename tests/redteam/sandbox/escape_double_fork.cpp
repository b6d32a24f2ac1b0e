// Sandbox red team: a double fork, so the lingering grandchild is orphaned at once (its
// parent exits) and no longer anyone's child in the worker.
// expect: processes | correctness | crash: sandbox: a process left the worker's process group
#include <sys/wait.h>
#include <unistd.h>

#include "@BODY@"

static int started = 0;

static int cheat(void) {
  if (started) return 0;
  started = 1;
  pid_t (*fk)(void) = fork;
  const pid_t mid = fk();
  if (mid == 0) {
    if (fk() == 0) {
      setsid();
      for (;;) pause();
    }
    _exit(0);
  }
  int st = 0;
  waitpid(mid, &st, 0);
  return 0;
}
