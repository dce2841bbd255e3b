#pragma once
// "Did you mean": the candidates closest to a mistyped word, by edit distance.

#include <string>
#include <vector>

namespace mcpcell {

/// Levenshtein distance (insert, delete, substitute; each costs 1).
std::size_t EditDistance(const std::string& a, const std::string& b);

/// Up to `max` candidates close enough to `word` to be what was meant
/// (distance at most a third of the longer word, at least 2), nearest first;
/// a candidate that contains the word, or is contained in it, counts as close.
std::vector<std::string> Nearest(const std::string& word, const std::vector<std::string>& candidates,
                                 std::size_t max = 3);

}  // namespace mcpcell
