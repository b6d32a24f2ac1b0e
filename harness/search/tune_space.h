#pragma once
// The tunable space a candidate declares in comments, e.g.
//   // kgate:tune BLOCK=[128,256,512] ROWS=[1,2,4]      (C/C++/CUDA)
//   # kgate:tune BLOCK=[128,256]                        (Python/Triton)
// and the defaults its `#define NAME value` lines (or Python `NAME = value`) give.
// The tuner applies a point as -DNAME=value *and* rewrites those default lines in the
// committed file, so the file alone reproduces the kernel that was measured.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace kgate::search {

// One assignment of every tunable: name -> value (as written in the comment).
using Point = std::map<std::string, std::string>;

struct Tunable {
  std::string name;
  std::vector<std::string> values;  // declared order; the default is always among them
  std::string default_value;        // from the source's default line, else values[0]
  int line = 0;                     // 1-based line of the declaring comment
};

struct TuneSpace {
  std::vector<Tunable> params;  // declaration order
  // `kgate:tune-local` in the source: descend from the defaults only (no spread sample of
  // a large space); for spaces around a compiler's own choice, where far points are slow
  // or fail to compile.
  bool local = false;
  // `kgate:tune-seed NAME=v ...`: points to measure first (another search's choice, e.g.
  // Inductor's coordinate descent), each the defaults with those values in place.
  std::vector<Point> seeds;
  bool empty() const { return params.empty(); }
  // Number of points (saturates at SIZE_MAX).
  std::size_t size() const;
  Point default_point() const;
  const Tunable* find(const std::string& name) const;
};

// Parses every `kgate:tune` comment in `source`. `file` names the source in errors
// ("file:line:col: error: ..."), thrown as kgate::UsageError.
TuneSpace parse_tune_space(const std::string& source, const std::string& file);

// Rewrites the default line of every name in `point`: `#define NAME v` (C family) or a
// top-level `NAME = v` (Python). Names without a default line are left alone.
std::string apply_point(const std::string& source, const Point& point);

// "BLOCK=256 ROWS=4" (stable order), for descriptions and logs.
std::string format_point(const Point& point);

}  // namespace kgate::search
