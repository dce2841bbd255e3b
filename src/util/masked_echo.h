#pragma once
// A tool's output on its way to our stderr, with given strings masked: what
// the host npm prints names registry URLs whole ("npm error FetchError:
// request to https://npm.fury.io/TOKEN/acme/pkg failed", a 404's "GET
// URL"), and a registry that takes its token in the path would have the
// token shown to the client and its log (adv14). Lines are written whole, so
// a masked string is never cut by the edge of a read; a line longer than the
// bound is written in pieces that keep back enough to hold any masked string.

#include <string>
#include <string_view>
#include <vector>

namespace mcpcell {

class MaskedEcho {
 public:
  /// `fd`: where the lines go. Empty strings in `masked` are left out.
  MaskedEcho(int fd, std::vector<std::string> masked);
  MaskedEcho(const MaskedEcho&) = delete;
  MaskedEcho& operator=(const MaskedEcho&) = delete;
  ~MaskedEcho() { Flush(); }

  void Add(std::string_view bytes);
  /// Writes what is held back (the tool has finished).
  void Flush();

  /// `text` with every occurrence of each of `masked` replaced by "[masked]".
  static std::string Masked(std::string text, const std::vector<std::string>& masked);

 private:
  void Write(std::string text);

  int fd_;
  std::vector<std::string> masked_;
  std::size_t longest_ = 0;
  std::string pending_;
};

}  // namespace mcpcell
