#include "util/nearest.h"

#include <algorithm>
#include <utility>

namespace mcpcell {

std::size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> Nearest(const std::string& word, const std::vector<std::string>& candidates,
                                 std::size_t max) {
  std::vector<std::pair<std::size_t, std::string>> close;
  for (const auto& c : candidates) {
    std::size_t d = EditDistance(word, c);
    std::size_t limit = std::max<std::size_t>(2, std::max(word.size(), c.size()) / 3);
    bool contains = word.size() >= 3 && (c.find(word) != std::string::npos || word.find(c) != std::string::npos);
    if (d <= limit || contains) close.emplace_back(contains ? std::min<std::size_t>(d, 1) : d, c);
  }
  std::stable_sort(close.begin(), close.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < close.size() && i < max; ++i) out.push_back(close[i].second);
  return out;
}

}  // namespace mcpcell
