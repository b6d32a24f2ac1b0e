#pragma once
// Whether a failure can be trusted as a verdict on the code being judged, or is the
// disk's: a compiler that cannot write its object, a worker that cannot write its cache
// and a harness that cannot write its records all fail in ways that read like a broken
// candidate ("collect2: error: ld returned 1 exit status"). Used by the gates (a baseline
// that does not compile) and the suite run (any failed gate).
#include <cstdint>
#include <string>
#include <vector>

namespace kgate::core {

// Free space below which a failure is not trusted as a verdict.
constexpr std::uintmax_t kLowSpaceBytes = std::uintmax_t{4} << 20;

// The system's words for a full disk in `text` (a compiler log, a verdict's reason):
// "No space left on device" (ENOSPC), "Disk quota exceeded" (EDQUOT), "File too large"
// (EFBIG); "" when none is there.
std::string disk_full_words(const std::string& text);

// Why the disk cannot be trusted with a verdict now ("" = it can): the words above in
// `text`, else the first of `dirs` and the temp directory ($TMPDIR, else /tmp) with
// under `low` bytes free ("/out has 812 KiB free"). Empty entries of `dirs` are skipped;
// a directory that does not exist (yet) is checked by its nearest existing parent.
std::string storage_trouble(const std::vector<std::string>& dirs, const std::string& text,
                            std::uintmax_t low = kLowSpaceBytes);

}  // namespace kgate::core
