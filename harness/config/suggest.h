#pragma once
// "Did you mean" for misspelled keys and names: the closest known word by edit distance.
#include <string>
#include <string_view>
#include <vector>

namespace kgate::config {

// Levenshtein distance (insert, delete, substitute each cost 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` when it is close enough to be a plausible typo
// (distance <= max(2, |word| / 3) and smaller than the word itself), else "".
std::string closest(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace kgate::config
