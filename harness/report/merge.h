#pragma once
// `kgate merge`: combine the output directories of the shards of one run into one set of
// records and reports. Merging is idempotent (a record present twice with the same content
// is kept once, so re-merging or merging a merged directory with a shard changes nothing)
// and refuses directories from different runs or configs.
#include <functional>
#include <string>
#include <vector>

#include "report/report_writer.h"
#include "report/run_info.h"

namespace kgate::report {

// kShards: the shards of one run (the same run id and config hash; a problem's records must
// agree). kLatest: runs of one suite over different problems or at different times (the
// nightly shards of a 250-problem sweep, one device session after another): each problem's
// record from the run that started last; the problems no run has a record of are named in
// a warning, not reported as errors.
enum class MergeMode { kShards, kLatest };

// Loads and combines. Throws UsageError when a directory is unreadable, run ids or config
// hashes differ (kShards) or the suites differ (kLatest), or two shards disagree on the
// record of one problem. kShards: a missing shard (no input is shard k of n, and none is
// the whole run) is logged as an error and named in RunInfo::missing_shards (shard index
// 0), each problem of its plan (RunInfo::shard_plans) an error row "no result: shard k/n
// is missing"; a later merge given that shard replaces those rows. Planned problems
// without a record are logged as warnings.
RunRecords merge_runs(const std::vector<std::string>& dirs, MergeMode mode = MergeMode::kShards);

// merge_runs + write OUT/run.json, OUT/results/*.json (replacing stale records there) and
// every report. `out_dir` must not be one of `dirs`. `adjust` (when given) sees the merged
// records before anything is written (`kgate merge --db` compares them with the history).
WrittenReports merge_dirs(const std::vector<std::string>& dirs, const std::string& out_dir,
                          const std::function<void(RunRecords&)>& adjust = {},
                          MergeMode mode = MergeMode::kShards);

}  // namespace kgate::report
