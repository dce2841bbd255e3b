#include "source/script_bins.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "util/lstat_kind.h"
#include "util/remove_tree.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

bool PlainBinName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

// The links of one dependency's bins: each a plain name for a regular
// file inside the package.
void AddBins(const DependencyBins& dep, std::map<std::string, std::string>* links) {
  const fs::path dep_dir(dep.dir);
  const std::string inside = dep_dir.lexically_normal().string() + "/";
  for (const auto& [name, rel] : *dep.bins) {
    fs::path file = (dep_dir / rel).lexically_normal();
    if (!PlainBinName(name) || file.string().rfind(inside, 0) != 0 || !IsRealFile(file)) continue;
    links->emplace(name, file.string());
  }
}

// npm puts D/node_modules/.bin on a script's PATH for every directory D from
// the package's up to the root, so not only each package's: a scope
// directory's too (<nm>/@s/node_modules/.bin, a package aliased as
// "@s/node_modules" puts one there: adv6) and a node_modules directory's own
// (<nm>/node_modules/.bin).
void AddAncestorBin(const fs::path& dir, std::vector<std::string>* out) {
  if (IsRealDir(dir / "node_modules" / ".bin")) out->push_back((dir / "node_modules" / ".bin").string());
}

void CollectBinDirs(const fs::path& node_modules, std::vector<std::string>* out, int depth) {
  if (depth > 64) return;  // deeper trees are no npm's; their .bin stays as it is hidden above
  std::error_code ec;
  if (IsRealDir(node_modules / ".bin")) out->push_back((node_modules / ".bin").string());
  AddAncestorBin(node_modules, out);
  for (const auto& e : fs::directory_iterator(node_modules, ec)) {
    std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.' || !IsRealDir(e.path())) continue;
    if (name[0] == '@') {
      AddAncestorBin(e.path(), out);
      for (const auto& s : fs::directory_iterator(e.path(), ec)) {
        if (IsRealDir(s.path() / "node_modules")) CollectBinDirs(s.path() / "node_modules", out, depth + 1);
      }
      continue;
    }
    if (IsRealDir(e.path() / "node_modules")) CollectBinDirs(e.path() / "node_modules", out, depth + 1);
  }
}

}  // namespace

std::map<std::string, std::string> DeclaredBins(const nlohmann::json& m) {
  std::map<std::string, std::string> declared;
  if (!m.is_object() || !m.contains("bin")) return declared;
  if (m["bin"].is_string() && m.contains("name") && m["name"].is_string()) {
    std::string name = m["name"].get<std::string>();
    declared[name.substr(name.rfind('/') + 1)] = m["bin"].get<std::string>();
  } else if (m["bin"].is_object()) {
    for (const auto& [k, v] : m["bin"].items()) {
      if (v.is_string()) declared[k] = v.get<std::string>();
    }
  }
  return declared;
}

std::map<std::string, std::string> BinLinks(const std::vector<DependencyBins>& deps) {
  std::map<std::string, std::string> out;
  for (const auto& dep : deps) AddBins(dep, &out);
  return out;
}

std::vector<std::string> BinDirs(const std::string& install_dir) {
  std::vector<std::string> out;
  CollectBinDirs(fs::path(install_dir) / "node_modules", &out, 0);
  return out;
}

Result<BinView> BinView::Make(const std::string& parent, const std::map<std::string, std::string>& links) {
  std::string tmpl = parent + "/.mcpcell-bin.XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return ErrnoError("make the install scripts' command view in", parent);
  BinView view(tmpl);
  if (::mkdir(view.links_dir().c_str(), 0755) != 0 || ::mkdir(view.empty_dir().c_str(), 0755) != 0 ||
      ::chmod(tmpl.c_str(), 0755) != 0) {
    return ErrnoError("make the install scripts' command view in", tmpl);
  }
  for (const auto& [name, file] : links) {
    std::string link = view.links_dir() + "/" + name;
    if (::symlink(file.c_str(), link.c_str()) != 0) return ErrnoError("link", link);
  }
  return view;
}

BinView::~BinView() {
  if (dir_.empty()) return;
  (void)RemoveTree(dir_);
}

}  // namespace mcpcell
