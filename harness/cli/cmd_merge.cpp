// `kgate merge DIR... --out DIR`: one set of records and reports from shard outputs.
#include "cli/commands.h"
#include "core/log.h"
#include "report/merge.h"

namespace kgate::cli {

ExitCode cmd_merge(const MergeOptions& o) {
  report::WrittenReports w = report::merge_dirs(o.dirs, o.out);
  for (const auto& f : w.files) log::info("wrote " + f);
  // Like `kgate report`: merging formats what the shards found; it never fails the pipeline.
  return ExitCode::kPass;
}

}  // namespace kgate::cli
