#pragma once
// One test's own directory under the test temp dir (gtest's TempDir(): /tmp/
// unless TEST_TMPDIR names another), removed with everything in it when the
// object goes, after a failed ASSERT too. Tests that write files put them
// here, so a run leaves nothing behind in /tmp.

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace mcpcell::testing {

class TempDir {
 public:
  /// mkdtemp(3) of <temp>/<prefix>-XXXXXX (mode 0700); path() is "" when it failed.
  explicit TempDir(std::string_view prefix = "mcpcell-unit") {
    std::string tmpl = ::testing::TempDir();
    if (tmpl.empty() || tmpl.back() != '/') tmpl += '/';
    tmpl += std::string(prefix) + "-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    MakeRemovable(path_);  // a test may have left a directory 0 or read-only
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  /// <path>/<name>.
  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  // Gives the owner rwx on every directory below `dir` (symlinks are not
  // followed), so remove_all can enter and empty each one.
  static void MakeRemovable(const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) MakeRemovable(it->path());
    }
  }

  std::string path_;
};

}  // namespace mcpcell::testing
