#include "search/tuner.h"

#include <algorithm>

namespace kgate::search {

Tuner::Tuner(TuneSpace space, uint64_t seed, TunerOptions options)
    : space_(std::move(space)), options_(options), rng_(seed ^ 0x6b67617465ull) {}

Tuner::Index Tuner::to_index(const Point& p) const {
  Index idx(space_.params.size(), 0);
  for (size_t a = 0; a < space_.params.size(); ++a) {
    const auto& t = space_.params[a];
    auto it = p.find(t.name);
    const std::string& v = it == p.end() ? t.default_value : it->second;
    auto f = std::find(t.values.begin(), t.values.end(), v);
    idx[a] = f == t.values.end() ? -1 : static_cast<int>(f - t.values.begin());
  }
  return idx;
}

Point Tuner::to_point(const Index& idx) const {
  Point p;
  for (size_t a = 0; a < space_.params.size(); ++a)
    p[space_.params[a].name] = space_.params[a].values[static_cast<size_t>(idx[a])];
  return p;
}

std::string Tuner::key(const Index& idx) const {
  std::string k;
  for (int i : idx) k += std::to_string(i) + ",";
  return k;
}

bool Tuner::measured(const Point& p) const { return measured_.count(key(to_index(p))) > 0; }

void Tuner::rebuild_queue(const Index& center) {
  queue_.clear();
  std::vector<size_t> axes(space_.params.size());
  for (size_t a = 0; a < axes.size(); ++a) axes[a] = a;
  // A local space (a kernel file around a compiler's or a template's own config) walks
  // its axes in the order the file declares them: its author's priority (block sizes
  // before warps and stages), so a kernel's few experiments before its move-on rule go to
  // the axes likeliest to matter, the same in every run. Other spaces: a random order.
  if (!space_.local) std::shuffle(axes.begin(), axes.end(), rng_);
  int max_len = 0;
  for (const auto& t : space_.params) max_len = std::max(max_len, static_cast<int>(t.values.size()));
  // Nearest values first: every axis at distance 1, then 2, ...
  for (int d = 1; d < max_len; ++d) {
    for (size_t a : axes) {
      for (int sign : {+1, -1}) {
        Index n = center;
        n[a] += sign * d;
        if (n[a] < 0 || n[a] >= static_cast<int>(space_.params[a].values.size())) continue;
        if (!measured_.count(key(n))) queue_.push_back(n);
      }
    }
  }
}

std::optional<Tuner::Index> Tuner::random_unmeasured() {
  std::size_t total = space_.size();
  if (measured_.size() >= total) return std::nullopt;
  // Rejection sampling while the space is mostly free; enumeration once it is crowded.
  for (int tries = 0; tries < 256; ++tries) {
    Index idx(space_.params.size());
    for (size_t a = 0; a < idx.size(); ++a) {
      std::uniform_int_distribution<int> u(0, static_cast<int>(space_.params[a].values.size()) - 1);
      idx[a] = u(rng_);
    }
    if (!measured_.count(key(idx))) return idx;
  }
  std::vector<Index> free;
  Index idx(space_.params.size(), 0);
  while (true) {
    if (!measured_.count(key(idx))) free.push_back(idx);
    size_t a = 0;
    while (a < idx.size() && ++idx[a] == static_cast<int>(space_.params[a].values.size())) idx[a++] = 0;
    if (a == idx.size()) break;
  }
  if (free.empty()) return std::nullopt;
  std::uniform_int_distribution<size_t> u(0, free.size() - 1);
  return free[u(rng_)];
}

void Tuner::plan_spread() {
  spread_planned_ = true;
  // Seeds first (measured like sampled starts: a good one becomes the descent's center).
  for (const auto& s : space_.seeds) {
    Index idx = to_index(s);
    bool dup = std::any_of(spread_.begin(), spread_.end(), [&](const Index& x) { return key(x) == key(idx); });
    if (!dup && !measured_.count(key(idx))) spread_.push_back(idx);
  }
  if (space_.local || space_.size() <= options_.large_space) return;
  for (int i = 0; i < options_.spread_samples; ++i) {
    auto idx = random_unmeasured();
    if (!idx) break;
    bool dup = std::any_of(spread_.begin(), spread_.end(),
                           [&](const Index& s) { return key(s) == key(*idx); });
    if (!dup) spread_.push_back(*idx);
  }
}

std::optional<Point> Tuner::propose() {
  if (space_.empty()) return std::nullopt;
  if (measured_.empty()) return space_.default_point();
  if (!spread_planned_) plan_spread();
  while (!spread_.empty()) {
    Index idx = spread_.front();
    if (!measured_.count(key(idx))) return to_point(idx);
    spread_.erase(spread_.begin());
  }
  while (!queue_.empty()) {
    Index idx = queue_.front();
    if (!measured_.count(key(idx))) return to_point(idx);
    queue_.erase(queue_.begin());
  }
  // Descent exhausted. Large spaces: descend from the best remaining sampled start,
  // halving the survivors each round; otherwise a random restart.
  while (!survivors_.empty()) {
    std::stable_sort(survivors_.begin(), survivors_.end(),
                     [](const auto& x, const auto& y) { return x.second < y.second; });
    Index start = survivors_.front().first;
    survivors_.erase(survivors_.begin());
    survivors_.resize(survivors_.size() / 2);
    center_ = start;
    center_is_best_ = false;
    rebuild_queue(start);
    if (!queue_.empty()) return to_point(queue_.front());
  }
  auto idx = random_unmeasured();
  if (!idx) return std::nullopt;
  restart_ = *idx;
  return to_point(*idx);
}

void Tuner::observe(const Point& point, bool improved, std::optional<double> cost) {
  Index idx = to_index(point);
  if (std::find(idx.begin(), idx.end(), -1) != idx.end()) return;  // not in the space
  std::string k = key(idx);
  bool first = measured_.empty();
  measured_.insert(k);
  if (!spread_.empty() && key(spread_.front()) == k) {
    spread_.erase(spread_.begin());
    if (cost) survivors_.push_back({idx, *cost});
  }
  if (!queue_.empty() && key(queue_.front()) == k) queue_.erase(queue_.begin());

  bool was_restart = restart_ && key(*restart_) == k;
  if (was_restart) restart_.reset();
  bool move = first || improved || (was_restart && cost) ||
              (!center_is_best_ && cost && center_cost_ && *cost < *center_cost_);
  if (move) {
    center_ = idx;
    center_cost_ = cost;
    center_is_best_ = first || improved;
    rebuild_queue(idx);
  }
}

}  // namespace kgate::search
