#include "cell/docker/podman_init.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mcpcell::docker {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

bool IsFile(const std::string& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

void AddDropIns(const std::string& dir, std::vector<std::string>* out) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string p = e.path().string();
    if (p.size() > 5 && p.compare(p.size() - 5, 5, ".conf") == 0 && IsFile(p)) found.push_back(p);
  }
  std::sort(found.begin(), found.end());
  out->insert(out->end(), found.begin(), found.end());
}

std::string Trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// A TOML basic or literal string value ("..." or '...'), without escapes
// (a path has none); nullopt for anything else.
std::optional<std::string> StringValue(const std::string& v) {
  if (v.size() < 2 || (v[0] != '"' && v[0] != '\'')) return std::nullopt;
  auto close = v.find(v[0], 1);
  if (close == std::string::npos) return std::nullopt;
  return v.substr(1, close - 1);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<std::string> ContainersConfFiles() {
  std::string only = Env("CONTAINERS_CONF");
  if (!only.empty()) return IsFile(only) ? std::vector<std::string>{only} : std::vector<std::string>{};
  std::vector<std::string> files;
  for (const char* p : {"/usr/share/containers/containers.conf", "/etc/containers/containers.conf"}) {
    if (IsFile(p)) files.push_back(p);
  }
  AddDropIns("/etc/containers/containers.conf.d", &files);
  if (::geteuid() != 0) {
    std::string base = Env("XDG_CONFIG_HOME");
    if (base.empty() && !Env("HOME").empty()) base = Env("HOME") + "/.config";
    if (!base.empty()) {
      std::string user = base + "/containers/containers.conf";
      if (IsFile(user)) files.push_back(user);
      AddDropIns(user + ".d", &files);
    }
  }
  return files;
}

std::optional<std::string> InitPathFromConf(const std::string& text) {
  std::istringstream in(text);
  std::string line, section;
  std::optional<std::string> found;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = Trim(line.substr(1, line.find(']') - 1));
      continue;
    }
    auto eq = line.find('=');
    if (eq == std::string::npos || Trim(line.substr(0, eq)) != "init_path") continue;
    if (section != "containers" && section != "engine") continue;
    if (auto v = StringValue(Trim(line.substr(eq + 1)))) found = *v;
  }
  return found;
}

std::string PodmanInitPath() {
  std::string path = kPodmanDefaultInit;
  for (const auto& f : ContainersConfFiles()) {
    if (auto p = InitPathFromConf(ReadAll(f)); p && !p->empty()) path = *p;
  }
  return path;
}

Status CheckPodmanInit() {
  std::string path = PodmanInitPath();
  if (::access(path.c_str(), X_OK) == 0) return {};
  Error e = ErrnoError(kPodmanInitWhat, path);
  e.detail = "Podman runs this binary as PID 1 of every container mcpcell creates (it forwards the stop "
             "signals and reaps orphans), and fails the create without it: " +
             std::string(path == kPodmanDefaultInit ? "apt-get install catatonit"
                                                    : "install it, or point init_path in containers.conf at "
                                                      "an init that exists (apt-get install catatonit gives " +
                                                          std::string(kPodmanDefaultInit) + ")");
  return e;
}

}  // namespace mcpcell::docker
