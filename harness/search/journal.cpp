#include "search/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include "core/error.h"
#include "core/file_io.h"
#include "report/record.h"
#include "search/experiment_record.h"

namespace kgate::search {
namespace {

using json = nlohmann::json;

// What a resume reads of the header (suite_run.cpp, open_journal) must have its type: a
// `"seed": 56006804533402862782` (past 2^64, so a float) or `"run_id": 7` would otherwise
// reach nlohmann's value<T>() as a cast or a type_error.
void check_header(const json& h, const std::string& path) {
  const std::string at = path + ":1:1: error: journal header ";
  for (const char* key : {"run_id", "suite", "suite_path", "backend", "started_at"})
    if (h.contains(key) && !h[key].is_string())
      throw InfraError(at + "field '" + key + "' is not a string (" + h[key].dump() + "); refusing to guess");
  if (h.contains("seed") && !h["seed"].is_number_unsigned() &&
      !(h["seed"].is_number_integer() && h["seed"].get<int64_t>() >= 0))
    throw InfraError(at + "field 'seed' is not an unsigned 64-bit integer (" + h["seed"].dump() +
                     "); refusing to guess");
}

// The shape a resume decodes an event's fields into, as the writer serialises a default
// record (one element in every list, every optional set): where it has an integer, the
// line must too. nlohmann's get<int>() casts whatever number it finds, and a float out of
// the int's range (`"n": 1e300`) is undefined behaviour, not an error.
json with_one_of_each(ExperimentRecord r) {
  r.gates.resize(1);
  r.gates[0].rows.resize(1);
  return json(r);
}
json with_one_of_each(report::ProblemResult r) {
  r.gates.resize(1);
  r.gates[0].rows.resize(1);
  r.vs_accepted = report::AcceptedComparison{};
  return json(r);
}

// "" when every number of `v` where `schema` holds an integer is an integer (and one where
// it holds an unsigned one is >= 0), else the first field that is not.
std::string integer_mismatch(const json& v, const json& schema, const std::string& where) {
  if (schema.is_number_integer() && v.is_number()) {
    if (v.is_number_float() || (schema.is_number_unsigned() && !v.is_number_unsigned() && v.get<int64_t>() < 0))
      return "'" + where + "' must be " + (schema.is_number_unsigned() ? "an unsigned integer" : "an integer") +
             ", got " + v.dump();
    return "";
  }
  if (schema.is_object() && v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      auto s = schema.find(it.key());
      if (s == schema.end()) continue;
      std::string m = integer_mismatch(*it, *s, where.empty() ? it.key() : where + "." + it.key());
      if (!m.empty()) return m;
    }
  } else if (schema.is_array() && !schema.empty() && v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::string m = integer_mismatch(v[i], schema[0], where + "[" + std::to_string(i) + "]");
      if (!m.empty()) return m;
    }
  }
  return "";
}

void check_event(const json& e, const std::string& path, int lineno) {
  static const json experiment = with_one_of_each(ExperimentRecord{});
  static const json problem_done = json{{"result", with_one_of_each(report::ProblemResult{})}};
  const std::string& kind = e["event"].get_ref<const std::string&>();
  std::string m = kind == "experiment"     ? integer_mismatch(e, experiment, "")
                  : kind == "problem_done" ? integer_mismatch(e, problem_done, "")
                                           : "";
  if (!m.empty())
    throw InfraError(path + ":" + std::to_string(lineno) + ": error: " + kind + " event: " + m +
                     "; refusing to guess");
}

std::string errno_text() { return std::strerror(errno); }

void write_all(int fd, const std::string& data, const std::string& path) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InfraError(path + ": write failed: " + errno_text());
    }
    off += static_cast<size_t>(n);
  }
}

void fsync_dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  int d = ::open(dir.empty() ? "/" : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (d >= 0) {
    ::fsync(d);
    ::close(d);
  }
}

}  // namespace

Journal::Contents Journal::read(const std::string& path, bool repair) {
  core::ReadResult file = core::read_file(path, kMaxBytes);
  if (file.not_found()) return Contents{};
  if (!file.ok()) throw InfraError(path + ": cannot read the journal: " + file.error);
  size_t good_end = 0;
  Contents c = parse(file.bytes, path, &good_end);
  if (c.torn_tail && repair) {
    if (::truncate(path.c_str(), static_cast<off_t>(good_end)) != 0)
      throw InfraError(path + ": cannot truncate the torn last line: " + errno_text());
  }
  return c;
}

Journal::Contents Journal::parse(const std::string& data, const std::string& path,
                                 std::size_t* good_end_out) {
  Contents c;
  size_t good_end = 0;  // bytes up to the end of the last complete, parsed line
  size_t pos = 0;
  int lineno = 0;
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    bool complete = nl != std::string::npos;
    std::string line = data.substr(pos, complete ? nl - pos : std::string::npos);
    ++lineno;
    nlohmann::json j;
    bool parsed = true;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      parsed = false;
    }
    bool last = !complete || nl + 1 >= data.size();
    if (!complete || !parsed) {
      if (!last)
        throw InfraError(path + ":" + std::to_string(lineno) +
                         ": error: damaged journal line (not JSON); refusing to guess");
      c.torn_tail = true;
      break;
    }
    if (lineno == 1) {
      // Compared as JSON: a "format" or "v" of another type is a foreign file, never a
      // type_error (or a float cast) of value<T>().
      if (!j.is_object() || !j.contains("format") || j["format"] != kFormat)
        throw UsageError(path + ":1:1: error: not a kgate journal (no \"format\": \"" +
                         std::string(kFormat) + "\" header)");
      if (!j.contains("v") || !j["v"].is_number_integer() || j["v"] != kVersion)
        throw UsageError(path + ":1:1: error: journal version " +
                         (j.contains("v") ? j["v"].dump() : std::string("(none)")) +
                         " is not supported (this kgate reads version " +
                         std::to_string(kVersion) + ")");
      check_header(j, path);
      c.header = j;
    } else {
      if (!j.is_object() || !j.contains("event") || !j["event"].is_string())
        throw InfraError(path + ":" + std::to_string(lineno) +
                         ": error: not a journal event (a JSON object with an \"event\" name); refusing to guess");
      check_event(j, path, lineno);
      c.events.push_back(std::move(j));
      c.lines.push_back(lineno);
    }
    good_end = nl + 1;
    pos = nl + 1;
  }
  if (good_end_out) *good_end_out = good_end;
  return c;
}

Journal::Journal(std::string path, nlohmann::json header) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InfraError(path_ + ": cannot open the journal: " + errno_text());
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_size == 0) {
    header["format"] = kFormat;
    header["v"] = kVersion;
    write_all(fd_, header.dump() + "\n", path_);
    ::fsync(fd_);
    fsync_dir_of(path_);
  }
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(const nlohmann::json& event) {
  // One write() of the whole line keeps the line intact against other appends; the
  // fsync makes it survive a power cut, not just a SIGKILL.
  // A write that fails part-way (a full disk) is undone: the journal ends with its last
  // whole line, never a torn one that only a resume's repair would drop.
  struct stat st {};
  const bool sized = ::fstat(fd_, &st) == 0;
  try {
    write_all(fd_, event.dump() + "\n", path_);
    if (::fsync(fd_) != 0) throw InfraError(path_ + ": fsync failed: " + errno_text());
  } catch (const InfraError&) {
    if (sized) (void)::ftruncate(fd_, st.st_size);
    throw;
  }
}

}  // namespace kgate::search
