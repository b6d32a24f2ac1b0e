// Sandbox red team: during `kgate run`, appends to the starter copy under
// OUT/state/<problem>/starter/ (the baseline every experiment is timed against; @TARGET@),
// the way a candidate could slow the baseline to look faster.
// expect: files | the state copy is byte-identical to the starter after the run
// kgate:tune SPARE=[0,1]
#include <stdio.h>

#include "@BODY@"

static int cheat(void) {
  FILE* (*op)(const char*, const char*) = fopen;
  FILE* f = op("@TARGET@", "a");
  if (f == NULL) return 0;
  fputs("// poisoned by the candidate\n", f);
  fclose(f);
  return 1;
}
