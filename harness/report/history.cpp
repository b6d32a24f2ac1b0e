#include "report/history.h"

#include <sqlite3.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "core/error.h"
#include "report/record_io.h"
#include "report/regression.h"
#include "report/summary.h"
#include "verdict/speed_policy.h"

namespace kgate::report {
namespace {

// The database is held by another connection (SQLITE_BUSY, SQLITE_LOCKED) past SQLite's
// busy handler: the transaction is rolled back and tried again (History::with_retry).
class Busy : public InfraError {
 public:
  using InfraError::InfraError;
};

bool busy_code(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

[[noreturn]] void throw_sqlite(int rc, const std::string& msg) {
  if (busy_code(rc)) throw Busy(msg);
  throw InfraError(msg);
}

// One prepared statement; finalized on scope exit. Errors become InfraError with the SQL.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) : db_(db) {
    if (int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &st_, nullptr); rc != SQLITE_OK)
      throw_sqlite(rc, "history: cannot prepare \"" + sql + "\": " + sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(st_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(int i, double v) {
    sqlite3_bind_double(st_, i, v);
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    sqlite3_bind_int64(st_, i, v);
    return *this;
  }
  // true while a row is available
  bool step() {
    int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw_sqlite(rc, std::string("history: ") + sqlite3_errmsg(db_));
  }
  std::string text(int col) const {
    auto* p = sqlite3_column_text(st_, col);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  double real(int col) const { return sqlite3_column_double(st_, col); }
  int64_t integer(int col) const { return sqlite3_column_int64(st_, col); }

 private:
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
};

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs(
  run_id TEXT PRIMARY KEY, suite TEXT, kind TEXT, config_hash TEXT, started_at TEXT,
  finished_at TEXT, gpu TEXT, info_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results(
  run_id TEXT NOT NULL, problem TEXT NOT NULL, level TEXT, gpu TEXT, outcome TEXT,
  speedup REAL, best_us REAL, wall_s REAL, record_json TEXT NOT NULL,
  PRIMARY KEY(run_id, problem));
CREATE INDEX IF NOT EXISTS results_by_problem ON results(problem, gpu);
CREATE TABLE IF NOT EXISTS accepted(
  id INTEGER PRIMARY KEY AUTOINCREMENT, problem TEXT NOT NULL, gpu TEXT NOT NULL,
  content_hash TEXT NOT NULL, accepted_at TEXT, commit_sha TEXT, run_id TEXT,
  best_us REAL, speedup REAL, config_key TEXT NOT NULL DEFAULT '', speedup_lo REAL DEFAULT 0,
  speedup_hi REAL DEFAULT 0);
CREATE INDEX IF NOT EXISTS accepted_by_problem ON accepted(problem, gpu);
)";

}  // namespace

std::string gpu_key(const Environment& env) {
  return env.gpu_target.empty() ? env.gpu : env.gpu_target;
}

std::string gpu_key(const ProblemResult& r, const RunInfo& info) {
  std::string own = gpu_key(r.env);
  return own.empty() ? gpu_key(info.env) : own;
}

std::string problem_key(const ProblemResult& r) { return r.level + "/" + r.problem; }

AcceptedKernel accepted_from(const ProblemResult& r, const RunInfo& info) {
  return {problem_key(r),  gpu_key(r, info), r.best_hash,
          info.finished_at.empty() ? info.started_at : info.finished_at,
          r.best_commit,   info.run_id,      r.best_us,
          r.speedup,       r.config_key,     r.speedup_lo,
          r.speedup_hi};
}

History::History(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw InfraError(path + ": cannot open the history database: " + msg);
  }
  set_lock_wait(wait_);  // shards of one CI run may record at once
  try {
    with_retry("the database could not be opened", [&] {
      try {
        // Write-ahead log: readers (a shard planning its partition) never block the writer
        // (a finished run recording itself), and a crash mid-write leaves the last commit
        // intact. Shards opening a new file at once contend here (the switch to WAL, the
        // first schema, the version row): retried as any busy write is.
        exec("PRAGMA journal_mode=WAL");
        exec(kSchema);
        // OR IGNORE: shards opening a new file at once race to this insert; one wins. A
        // file that has its version is only read: opening it waits for no writer.
        std::string v = schema_version();
        if (v.empty()) {
          Stmt(db_, "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', ?)")
              .bind(1, std::to_string(kHistorySchemaVersion))
              .step();
          v = schema_version();
        }
        if (v == "1") {
          migrate_from_1();
        } else if (v != std::to_string(kHistorySchemaVersion)) {
          throw UsageError(path + ": history schema version " + v + " (this kgate reads " +
                           std::to_string(kHistorySchemaVersion) + ")");
        }
      } catch (const Busy&) {
        throw;
      } catch (const InfraError& e) {
        // A file that is not a database at all is the user's input problem.
        throw UsageError(path + ": not a kgate history database (" + e.what() + ")");
      }
    });
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

void History::set_lock_wait(LockWait w) {
  wait_ = w;
  sqlite3_busy_timeout(db_, static_cast<int>(std::min(w.attempt, w.total).count()));
}

void History::with_retry(const std::string& what, const std::function<void()>& body) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  // Jittered pauses between tries, so that writers refused together do not retry together.
  std::minstd_rand rng(static_cast<unsigned>(::getpid()) ^
                       static_cast<unsigned>(start.time_since_epoch().count()));
  for (int attempt = 1;; ++attempt) {
    try {
      body();
      return;
    } catch (const Busy& e) {
      const auto pause = std::chrono::milliseconds(20 + rng() % 180);
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
      if (waited + pause >= wait_.total) {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%.1f", static_cast<double>(waited.count()) / 1000);
        throw InfraError(path_ + ": the history database stayed locked by other writers for " + secs + " s (" +
                         std::to_string(attempt) + " tries; " + e.what() + "): " + what);
      }
      std::this_thread::sleep_for(pause);
    }
  }
}

void History::write_transaction(const std::string& what, const std::function<void()>& body) {
  with_retry(what, [&] {
    exec("BEGIN IMMEDIATE");
    try {
      body();
      exec("COMMIT");
    } catch (...) {
      exec_noexcept("ROLLBACK");
      throw;
    }
  });
}

History::~History() { sqlite3_close(db_); }

std::string History::schema_version() const {
  Stmt get(db_, "SELECT value FROM meta WHERE key = 'schema_version'");
  return get.step() ? get.text(0) : "";
}

// Version 1 -> 2: accepted results get their config key and speedup CI. In a write
// transaction that re-reads the version, so two processes opening one old file at once
// migrate it once.
void History::migrate_from_1() {
  exec("BEGIN IMMEDIATE");  // retried whole by the constructor while busy
  try {
    if (schema_version() == "1") {
      exec("ALTER TABLE accepted ADD COLUMN config_key TEXT NOT NULL DEFAULT ''");
      exec("ALTER TABLE accepted ADD COLUMN speedup_lo REAL DEFAULT 0");
      exec("ALTER TABLE accepted ADD COLUMN speedup_hi REAL DEFAULT 0");
      Stmt(db_, "UPDATE meta SET value = ? WHERE key = 'schema_version'")
          .bind(1, std::to_string(kHistorySchemaVersion))
          .step();
    }
    exec("COMMIT");
  } catch (...) {
    exec_noexcept("ROLLBACK");
    throw;
  }
}

void History::exec_noexcept(const std::string& sql) {
  char* err = nullptr;
  sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);
}

void History::exec(const std::string& sql) {
  char* err = nullptr;
  if (int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err); rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw_sqlite(rc, "history: " + msg);
  }
}

void History::record_run(const RunRecords& run) {
  const RunInfo& info = run.info;
  if (info.run_id.empty()) throw UsageError("history: the run has no run_id");
  const std::string gpu = gpu_key(info.env);
  // A PR check's results are stored (kind check) but never accepted: its kernel is not merged.
  const bool accepts = info.kind == RunKind::kRun;
  write_transaction("run " + info.run_id + " was not recorded", [&] {
    Stmt(db_, "DELETE FROM results WHERE run_id = ?").bind(1, info.run_id).step();
    Stmt(db_,
         "INSERT OR REPLACE INTO runs(run_id, suite, kind, config_hash, started_at, finished_at, "
         "gpu, info_json) VALUES(?, ?, ?, ?, ?, ?, ?, ?)")
        .bind(1, info.run_id)
        .bind(2, info.suite)
        .bind(3, nlohmann::json(info.kind).get<std::string>())
        .bind(4, info.config_hash)
        .bind(5, info.started_at)
        .bind(6, info.finished_at)
        .bind(7, gpu)
        .bind(8, nlohmann::json(info).dump())
        .step();
    for (const auto& r : run.results) {
      const std::string problem = problem_key(r);
      const std::string rgpu = gpu_key(r, info);
      Stmt(db_,
           "INSERT INTO results(run_id, problem, level, gpu, outcome, speedup, best_us, wall_s, "
           "record_json) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)")
          .bind(1, info.run_id)
          .bind(2, problem)
          .bind(3, r.level)
          .bind(4, rgpu)
          .bind(5, to_string(r.outcome))
          .bind(6, r.speedup)
          .bind(7, r.best_us)
          .bind(8, r.wall_s)
          .bind(9, nlohmann::json(r).dump())
          .step();
      if (accepts && r.outcome == Outcome::kImproved && is_correct(r) && !r.best_hash.empty()) {
        // A new kernel replaces the accepted one by the rule that keeps a candidate: its
        // speedup's lower bound against the accepted result clears the run's keep threshold.
        auto current = accepted(problem, rgpu, r.config_key);
        const gates::SpeedPolicy policy{info.keep_threshold, info.regression_threshold};
        if (!current || (current->content_hash != r.best_hash &&
                         policy.clears_keep(speed_vs_accepted(r, *current))))
          insert_accepted(accepted_from(r, info));
      }
    }
  });
}

bool History::has_run(const std::string& run_id) const {
  Stmt q(db_, "SELECT 1 FROM runs WHERE run_id = ?");
  q.bind(1, run_id);
  return q.step();
}

void History::accept(const AcceptedKernel& k) {
  with_retry("the accepted result of " + k.problem + " (run " + k.run_id + ") was not recorded",
             [&] { insert_accepted(k); });
}

void History::insert_accepted(const AcceptedKernel& k) {
  Stmt(db_,
       "INSERT INTO accepted(problem, gpu, content_hash, accepted_at, commit_sha, run_id, best_us, "
       "speedup, config_key, speedup_lo, speedup_hi) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, k.problem)
      .bind(2, k.gpu)
      .bind(3, k.content_hash)
      .bind(4, k.accepted_at)
      .bind(5, k.commit)
      .bind(6, k.run_id)
      .bind(7, k.best_us)
      .bind(8, k.speedup)
      .bind(9, k.config_key)
      .bind(10, k.speedup_lo)
      .bind(11, k.speedup_hi)
      .step();
}

std::optional<AcceptedKernel> History::accepted(const std::string& problem, const std::string& gpu,
                                                const std::string& config_key) const {
  Stmt q(db_,
         "SELECT problem, gpu, content_hash, accepted_at, commit_sha, run_id, best_us, speedup, "
         "config_key, speedup_lo, speedup_hi FROM accepted WHERE problem = ? AND gpu = ? AND "
         "config_key = ? ORDER BY id DESC LIMIT 1");
  q.bind(1, problem).bind(2, gpu).bind(3, config_key);
  if (!q.step()) return std::nullopt;
  return AcceptedKernel{q.text(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5),
                        q.real(6), q.real(7), q.text(8), q.real(9), q.real(10)};
}

std::vector<RunSummaryRow> History::runs(const std::string& since, const std::string& until) const {
  Stmt q(db_,
         "SELECT r.run_id, r.suite, r.started_at, r.gpu, COUNT(x.problem) FROM runs r LEFT JOIN "
         "results x ON x.run_id = r.run_id WHERE r.kind = 'run' AND r.started_at >= ? AND "
         "r.started_at < ? "
         "GROUP BY r.run_id ORDER BY r.started_at, r.run_id");
  q.bind(1, since).bind(2, until);
  std::vector<RunSummaryRow> out;
  while (q.step())
    out.push_back({q.text(0), q.text(1), q.text(2), q.text(3), static_cast<int>(q.integer(4))});
  return out;
}

RunRecords History::load_run(const std::string& run_id) const {
  RunRecords run;
  Stmt qi(db_, "SELECT info_json FROM runs WHERE run_id = ?");
  qi.bind(1, run_id);
  if (!qi.step()) throw UsageError(path_ + ": no run \"" + run_id + "\"");
  try {
    run.info = nlohmann::json::parse(qi.text(0)).get<RunInfo>();
    Stmt q(db_, "SELECT record_json FROM results WHERE run_id = ? ORDER BY problem");
    q.bind(1, run_id);
    while (q.step()) run.results.push_back(nlohmann::json::parse(q.text(0)).get<ProblemResult>());
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path_ + ": run \"" + run_id + "\" has a damaged record: " + e.what());
  }
  return run;
}

std::string History::latest_start() const {
  Stmt q(db_, "SELECT MAX(started_at) FROM runs");
  return q.step() ? q.text(0) : "";
}

std::map<std::string, double> History::expected_cost_s(const std::string& gpu, int window) const {
  Stmt q(db_,
         "SELECT x.problem, x.wall_s FROM results x JOIN runs r ON r.run_id = x.run_id "
         "WHERE r.kind = 'run' AND (? = '' OR x.gpu = ?) AND x.wall_s > 0 "
         "ORDER BY r.started_at DESC");
  q.bind(1, gpu).bind(2, gpu);
  std::map<std::string, std::pair<double, int>> acc;
  while (q.step()) {
    auto& [sum, n] = acc[q.text(0)];
    if (n < window) {
      sum += q.real(1);
      ++n;
    }
  }
  std::map<std::string, double> out;
  for (const auto& [id, sn] : acc) out[id] = sn.first / sn.second;
  return out;
}

}  // namespace kgate::report
