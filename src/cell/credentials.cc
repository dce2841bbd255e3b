#include "cell/credentials.h"

#include <dirent.h>
#include <sys/stat.h>

#include <array>
#include <string_view>

namespace mcpcell {
namespace {

struct Location {
  std::string_view rel;   // relative to a home directory (or absolute when it starts with '/')
  std::string_view what;  // for the message
};

// Relative entries are matched as path components anywhere, not only under
// $HOME: /srv/backup/alice/.ssh is as secret as ~/.ssh.
constexpr std::array<Location, 32> kLocations{{
    {".ssh", "SSH keys"},
    {".gnupg", "GnuPG keys"},
    {".aws", "AWS credentials"},
    {".azure", "Azure credentials"},
    {".config/gcloud", "Google Cloud credentials"},
    {".kube", "Kubernetes credentials"},
    {".docker", "Docker credentials"},
    {".config/gh", "GitHub CLI token"},
    {".netrc", "netrc passwords"},
    {".git-credentials", "git credentials"},
    {".npmrc", "npm token"},
    {".pypirc", "PyPI token"},
    {".password-store", "pass password store"},
    {".local/share/keyrings", "desktop keyring"},
    {".mozilla", "browser profile"},
    {".config/google-chrome", "browser profile"},
    {".config/chromium", "browser profile"},
    {"/var/run/docker.sock", "Docker engine socket (root on the host)"},
    {"/run/user", "per-user runtime sockets (session bus, agents, rootless engines)"},
    {"/run/dbus", "system D-Bus socket"},
    {"/var/run/dbus", "system D-Bus socket"},
    {"/run/systemd", "systemd control sockets"},
    {"/tmp/.X11-unix", "X11 display sockets"},
    {"/run/docker.sock", "Docker engine socket (root on the host)"},
    {"/run/podman", "Podman engine socket"},
    {"/run/containerd", "containerd socket"},
    {"/etc/shadow", "password hashes"},
    {"/etc/gshadow", "group password hashes"},
    {"/etc/sudoers", "sudo rules"},
    {"/proc/kcore", "kernel memory"},
    {"/dev/mem", "physical memory"},
    {"/dev/kmem", "kernel memory"},
}};

bool Exists(const std::string& p) {
  struct stat st{};
  return ::lstat(p.c_str(), &st) == 0;
}

// True if `path` equals `loc` or lies beneath it (component-wise).
bool IsAtOrBelow(std::string_view path, std::string_view loc) {
  if (path.substr(0, loc.size()) != loc) return false;
  return path.size() == loc.size() || path[loc.size()] == '/';
}

}  // namespace

Status CheckNotCredential(const std::string& path) {
  for (const auto& loc : kLocations) {
    if (loc.rel.front() == '/') {
      if (IsAtOrBelow(path, loc.rel)) {
        return MakeError("refusing to expose", path,
                         std::string(loc.what) + " — pass --force-credentials if you really mean it");
      }
      continue;
    }
    // Relative: look for "/<rel>" as a component sequence anywhere in the path.
    std::string needle = "/" + std::string(loc.rel);
    for (std::size_t at = path.find(needle); at != std::string::npos; at = path.find(needle, at + 1)) {
      if (IsAtOrBelow(std::string_view(path).substr(at), needle)) {
        return MakeError("refusing to expose", path,
                         std::string(loc.what) + " (" + path.substr(0, at) + needle +
                             ") — pass --force-credentials if you really mean it");
      }
    }
  }
  return {};
}

std::vector<std::string> CredentialsBeneath(const std::string& dir) {
  std::vector<std::string> found;
  std::string base = dir == "/" ? "" : dir;
  for (const auto& loc : kLocations) {
    if (loc.rel.front() == '/') {
      if (IsAtOrBelow(loc.rel, dir == "/" ? std::string_view("") : std::string_view(dir)) && Exists(std::string(loc.rel))) {
        found.emplace_back(loc.rel);
      }
      continue;
    }
    std::string direct = base + "/" + std::string(loc.rel);
    if (Exists(direct)) found.push_back(direct);
  }
  // One level of homes: --read /home or --read / must not reveal /home/*/.ssh.
  std::vector<std::string> homes;
  if (dir == "/") homes = {"/root"};
  if (dir == "/" || dir == "/home") {
    // Enumerate /home/* cheaply via the credential names we know.
    // (A directory scan keeps this exact rather than guessing user names.)
    std::string home_root = "/home";
    if (auto* d = ::opendir(home_root.c_str())) {
      while (auto* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") homes.push_back(home_root + "/" + n);
      }
      ::closedir(d);
    }
  }
  for (const auto& h : homes) {
    for (const auto& loc : kLocations) {
      if (loc.rel.front() == '/') continue;
      std::string p = h + "/" + std::string(loc.rel);
      if (Exists(p)) found.push_back(p);
    }
  }
  return found;
}

}  // namespace mcpcell
