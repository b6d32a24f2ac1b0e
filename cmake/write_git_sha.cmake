# Writes OUT (a C++ file defining kgate::build::kGitSha) from the checkout at SRC, and
# only when the text changes: every build records the commit it was built from (with
# "-dirty" for uncommitted changes to tracked files) without recompiling anything else.
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${SRC}
  OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT sha)
  set(sha "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no
    WORKING_DIRECTORY ${SRC}
    OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(changes)
    set(sha "${sha}-dirty")
  endif()
endif()
set(text "// Generated at build time by cmake/write_git_sha.cmake.\n#include \"kgate/build_info.h\"\nnamespace kgate::build {\nconst char* const kGitSha = \"${sha}\";\n}  // namespace kgate::build\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE ${OUT} "${text}")
