#include "source/script_bins.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "util/json_input.h"
#include "util/lstat_kind.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

nlohmann::json Manifest(const fs::path& dir) {
  if (!IsRealFile(dir / "package.json")) return nlohmann::json::object();
  auto text = ReadTextFile((dir / "package.json").string(), "read package manifest");
  nlohmann::json j = text.ok() ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  return j.is_object() ? j : nlohmann::json::object();
}

// Where node finds `dep` from `from`: the nearest <dir>/node_modules/<dep>
// from `from` up to the install.
std::string ResolveDep(const fs::path& from, const std::string& dep, const fs::path& install) {
  if (dep.empty() || dep.find("..") != std::string::npos || dep.front() == '/') return {};
  for (fs::path d = from;; d = d.parent_path()) {
    if (d.filename() != "node_modules") {
      fs::path candidate = d / "node_modules" / dep;
      if (IsRealDir(candidate)) return candidate.string();
    }
    if (d == install || d.string().size() <= install.string().size()) return {};
  }
}

bool PlainBinName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

// The bins a dependency's manifest declares, as npm links them ("bin": a
// path names one bin after the package; an object names each).
void AddBins(const fs::path& dep_dir, std::map<std::string, std::string>* links) {
  nlohmann::json m = Manifest(dep_dir);
  if (!m.contains("bin")) return;
  std::map<std::string, std::string> declared;
  if (m["bin"].is_string() && m.contains("name") && m["name"].is_string()) {
    std::string name = m["name"].get<std::string>();
    declared[name.substr(name.rfind('/') + 1)] = m["bin"].get<std::string>();
  } else if (m["bin"].is_object()) {
    for (const auto& [k, v] : m["bin"].items()) {
      if (v.is_string()) declared[k] = v.get<std::string>();
    }
  }
  for (const auto& [name, rel] : declared) {
    fs::path file = (dep_dir / rel).lexically_normal();
    std::string inside = dep_dir.lexically_normal().string() + "/";
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

std::map<std::string, std::string> BinLinks(const std::string& install_dir, const std::string& package_dir,
                                            const std::vector<std::string>& bundled) {
  std::map<std::string, std::string> out;
  fs::path install(install_dir);
  std::vector<std::string> owners{package_dir};
  owners.insert(owners.end(), bundled.begin(), bundled.end());
  for (const auto& owner : owners) {
    nlohmann::json m = Manifest(owner);
    for (const char* field : {"dependencies", "optionalDependencies"}) {
      if (!m.contains(field) || !m[field].is_object()) continue;
      for (const auto& [dep, range] : m[field].items()) {
        std::string dir = ResolveDep(fs::path(owner), dep, install);
        if (!dir.empty()) AddBins(fs::path(dir), &out);
      }
    }
  }
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
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

}  // namespace mcpcell
