#pragma once
// The commands an install script may run from node_modules (adv4, a HIGH
// finding): npm puts every node_modules/.bin from the package's own up to
// the install's first on the scripts' PATH, before its node-gyp and the
// system's, and the install's top .bin links the bins of EVERY package in
// the tree. So any package, a dependency of no one, could name a bin
// "node-gyp" or "node" and run its own code in another package's cell,
// where that package's directory is writable. A tarball can also ship a
// .bin of its own. In each script cell every node_modules/.bin is hidden,
// and one (the nearest npm reads) shows only the bins of what the package
// and the packages it bundles declare as dependencies: their code runs in
// that cell anyway (the scripts require them).

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace mcpcell {

/// The bins a manifest declares, as npm links them ("bin": a path names one
/// bin after the package's name; an object names each): bin name -> its
/// file, relative to the package.
std::map<std::string, std::string> DeclaredBins(const nlohmann::json& manifest);

/// One dependency as the plan read it (script_plan.h): its directory and
/// DeclaredBins of its manifest.
struct DependencyBins {
  std::string dir;
  const std::map<std::string, std::string>* bins;
};

/// The bins of `deps` (a package's and its bundled packages' declared
/// dependencies, resolved by the plan): bin name -> the file it runs
/// (absolute, below its package), the first of a name kept. A bin whose
/// name or file is no plain one, or whose file is no regular file (lstat),
/// is left out. Asked for every cell before the first one runs.
std::map<std::string, std::string> BinLinks(const std::vector<DependencyBins>& deps);

/// Every node_modules/.bin directory below the install (real directories),
/// once per install.
std::vector<std::string> BinDirs(const std::string& install_dir);

/// A directory holding `links` as symlinks and an empty directory
/// ("<dir>/empty"), removed with the object. Made below `parent`.
class BinView {
 public:
  static Result<BinView> Make(const std::string& parent, const std::map<std::string, std::string>& links);
  BinView(BinView&& o) noexcept : dir_(std::move(o.dir_)) { o.dir_.clear(); }
  BinView& operator=(BinView&&) = delete;
  ~BinView();
  const std::string& dir() const { return dir_; }
  std::string links_dir() const { return dir_ + "/bin"; }
  std::string empty_dir() const { return dir_ + "/empty"; }

 private:
  explicit BinView(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace mcpcell
