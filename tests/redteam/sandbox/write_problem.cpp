// Sandbox red team: appends to a file the harness owns -- the problem's YAML for
// `kgate bench`, the starter copy under OUT/state/<problem>/starter/ (the baseline every
// experiment is timed against) for `kgate run`, an object planted in the compile cache
// beside the baseline's (what a later worker would load under that key) -- whose path
// the script substitutes for @TARGET@, reaching fopen through a pointer so the lint's
// call pattern misses it.
// expect: files | the target is unchanged and the candidate passes (the write failed)
// kgate:tune SPARE=[0,1]
#include <stdio.h>

#include "@BODY@"

static int cheat(void) {
  FILE* (*op)(const char*, const char*) = fopen;
  FILE* f = op("@TARGET@", "a");
  if (f == NULL) return 0;
  fputs("// rewritten by the candidate\n", f);
  fclose(f);
  return 1;
}
