// Sandbox red team: appends to the problem's YAML (the script substitutes its path for
// @TARGET@), reaching fopen through a pointer so the lint's call pattern misses it.
// expect: files | the problem file is unchanged and the candidate passes (the write failed)
#include <stdio.h>

#include "@BODY@"

static int cheat(void) {
  FILE* (*op)(const char*, const char*) = fopen;
  FILE* f = op("@TARGET@", "a");
  if (f == NULL) return 0;
  fputs("# rewritten by the candidate\n", f);
  fclose(f);
  return 1;
}
