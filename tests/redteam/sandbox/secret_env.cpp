// Sandbox red team: reads an API key from the environment (the test exports
// KGATE_REDTEAM_API_KEY to kgate).
// expect: environment | the key is not in the worker's environment and the candidate passes
#include <stdlib.h>

#include "@BODY@"

static int cheat(void) { return getenv("KGATE_REDTEAM_API_KEY") != NULL; }
