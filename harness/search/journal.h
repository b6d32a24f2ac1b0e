#pragma once
// The run journal: append-only JSON lines, a version header first, fsync'd per event.
// It is the truth a resumed run replays; the TSV, result records and git refs are
// rebuilt from it. A torn last line (a crash mid-write) is dropped and truncated away;
// a damaged line anywhere else, or a foreign header, is an error, never a silent guess.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgate::search {

class Journal {
 public:
  static constexpr int kVersion = 1;
  static constexpr const char* kFormat = "kgate-journal";
  // A journal longer than this is refused on read (the error states it): thousands of
  // experiments take a few MB, so this bound is only ever hit by a wrong file.
  static constexpr std::size_t kMaxBytes = std::size_t{1} << 30;  // 1 GiB

  struct Contents {
    nlohmann::json header;               // null when the file does not exist
    std::vector<nlohmann::json> events;  // every complete event after the header
    std::vector<int> lines;              // the 1-based line of each event
    bool torn_tail = false;              // a partial last line was found (and truncated)
  };

  // Reads `path`. With `repair`, a torn tail is truncated from the file.
  // Throws InfraError on a damaged middle line or an event that is not an object with an
  // "event" name, UsageError on a foreign file.
  static Contents read(const std::string& path, bool repair);
  // The same on bytes in memory (`path` only names them in errors); *good_end receives
  // the length of the intact prefix (what a repair truncates the file to).
  static Contents parse(const std::string& data, const std::string& path,
                        std::size_t* good_end = nullptr);

  // Opens for appending. When the file is missing or empty, writes `header` (with
  // "format" and "v" added) as its first line.
  Journal(std::string path, nlohmann::json header);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // One line, written whole, then fsync. Throws InfraError on a write failure.
  void append(const nlohmann::json& event);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace kgate::search
