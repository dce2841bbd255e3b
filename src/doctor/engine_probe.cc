// Container engines: docker and podman (binary, socket, does the daemon answer
// /_ping), gVisor's runsc and whether it is usable (registered in docker's
// /info as "runsc", its binary executable, its runtimeArgs), bwrap.

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "cell/docker/podman_init.h"
#include "doctor/checks.h"
#include "doctor/host.h"
#include "doctor/parse.h"
#include "doctor/unix_http.h"
#include "util/path_search.h"

namespace mcpcell::doctor {
namespace {

using S = Probe::Status;
using namespace std::chrono_literals;

constexpr auto kTimeout = 2000ms;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// The socket files to try, without duplicates (/var/run is usually a symlink to /run).
std::vector<std::string> Unique(const std::vector<std::string>& paths) {
  std::vector<std::string> out, seen;
  for (const std::string& p : paths) {
    if (p.empty()) continue;
    char real[PATH_MAX];
    std::string key = ::realpath(p.c_str(), real) != nullptr ? real : p;
    size_t slash = p.rfind('/');
    if (key == p && slash != std::string::npos && slash > 0) {  // missing file: resolve its dir
      std::string dir = p.substr(0, slash);
      if (::realpath(dir.c_str(), real) != nullptr) key = std::string(real) + p.substr(slash);
    }
    bool dup = false;
    for (const auto& s : seen) dup = dup || s == key;
    if (dup) continue;
    seen.push_back(key);
    out.push_back(p);
  }
  return out;
}

std::string RuntimeDir() {
  std::string xdg = Env("XDG_RUNTIME_DIR");
  return xdg.empty() ? "/run/user/" + std::to_string(::geteuid()) : xdg;
}

// Why a socket did not answer, in words a user can act on.
std::string Reason(const Error& e) {
  switch (e.err) {
    case ENOENT: return "no such file (daemon not running, or listening elsewhere)";
    case EACCES: return "permission denied (this user may not use the socket)";
    case ECONNREFUSED: return "connection refused (socket file exists, no daemon listens)";
    case EAGAIN: return "no answer within 2 s";
    case 0: return e.detail;
    default: return ErrnoText(e.err);
  }
}

struct SocketResult {
  bool ok = false;
  std::string path;     ///< the socket that answered (when ok)
  HttpResponse ping;    ///< its /_ping answer (when ok)
  std::string why;      ///< per-socket reasons when none answered
  int first_err = 0;    ///< the errno of the first failure, to choose the fix
};

SocketResult PingFirst(const std::vector<std::string>& sockets) {
  SocketResult r;
  for (const std::string& path : sockets) {
    auto answer = UnixHttpRequest(path, "GET /_ping HTTP/1.1\r\nHost: d\r\n\r\n", kTimeout);
    std::string reason;
    if (answer.ok() && answer->status == 200) {
      r.ok = true;
      r.path = path;
      r.ping = *answer;
      return r;
    }
    if (answer.ok()) {
      reason = "answered HTTP " + std::to_string(answer->status);
    } else {
      reason = Reason(answer.error());
      if (r.first_err == 0) r.first_err = answer.error().err;
    }
    r.why += (r.why.empty() ? "" : "; ") + path + ": " + reason;
  }
  if (sockets.empty()) r.why = "no socket to try";
  return r;
}

std::string Header(const HttpResponse& r, const std::string& name) {
  auto it = r.headers.find(name);
  return it == r.headers.end() ? "" : it->second;
}

// Docker's /info, parsed; empty object when it cannot be had.
nlohmann::json DockerInfo(const std::string& socket) {
  auto answer = UnixHttpRequest(socket, "GET /info HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n", kTimeout);
  if (!answer.ok() || answer->status != 200) return nlohmann::json::object();
  auto doc = nlohmann::json::parse(answer->body, nullptr, /*allow_exceptions=*/false);
  return doc.is_object() ? doc : nlohmann::json::object();
}

Probe BinaryProbe(const std::string& name, const std::string& missing_fix, S missing_status,
                  const std::string& missing_detail = "") {
  std::string path = FindOnHostPath(name);
  if (!path.empty()) return {name, S::kOk, path, "", ""};
  return {name, missing_status, "not on PATH", missing_detail, missing_fix};
}

Probe DockerSocketProbe(EngineFacts* facts, nlohmann::json* info_out) {
  Probe p{"docker socket", S::kMissing, "", "", ""};
  std::string host = Env("DOCKER_HOST");
  std::vector<std::string> sockets;
  if (!host.empty()) {
    sockets.push_back(UnixSocketPathFromHost(host));
    if (sockets.back().empty()) {
      p.status = S::kWarn;
      p.value = "DOCKER_HOST=" + host;
      p.detail = "mcpcell talks to the Engine API over unix sockets only";
      p.fix = "set DOCKER_HOST=unix:///path/to/docker.sock";
      facts->docker_why = "DOCKER_HOST is not a unix socket";
      return p;
    }
  } else {
    sockets = Unique({"/var/run/docker.sock", "/run/docker.sock", RuntimeDir() + "/docker.sock"});
  }
  SocketResult r = PingFirst(sockets);
  if (!r.ok) {
    p.value = r.why;
    p.detail = "no Docker daemon answered /_ping";
    if (r.first_err == EACCES) {
      p.fix = "add your user to the docker group (root-equivalent), or use rootless Docker or Podman";
    } else if (r.first_err == EAGAIN) {
      p.fix = "the daemon accepted but did not answer: check it (systemctl status docker, its log)";
    } else if (r.first_err == ECONNREFUSED) {
      p.fix = "restart the daemon: systemctl restart docker (or start dockerd)";
    } else {
      p.fix = "start the daemon: systemctl start docker (or dockerd &), or set DOCKER_HOST=unix:///path";
    }
    facts->docker_why = "docker: " + r.why;
    return p;
  }
  nlohmann::json info = DockerInfo(r.path);
  *info_out = info;
  std::string version = info.value("ServerVersion", std::string());
  p.status = S::kOk;
  p.value = r.path + ": reachable";
  if (!version.empty()) p.value += ", Docker " + version;
  std::string api = Header(r.ping, "api-version");
  if (!api.empty()) p.value += ", API " + api;
  facts->docker_ok = true;
  facts->docker_why = "Docker daemon answers at " + r.path;
  return p;
}

Probe PodmanSocketProbe(EngineFacts* facts, bool have_binary) {
  Probe p{"podman socket", S::kMissing, "", "", ""};
  std::string user_socket = RuntimeDir() + "/podman/podman.sock";
  SocketResult r = PingFirst(Unique({user_socket, "/run/podman/podman.sock"}));
  if (r.ok) {
    p.status = S::kOk;
    p.value = r.path + ": reachable";
    std::string api = Header(r.ping, "libpod-api-version");
    if (!api.empty()) p.value += ", libpod API " + api;
    facts->podman_ok = true;
    facts->podman_why = "Podman service answers at " + r.path;
    return p;
  }
  p.value = r.why;
  p.detail = "no Podman service answered /_ping";
  if (have_binary) {
    p.status = S::kWarn;
    p.fix = "systemctl --user start podman.socket, or: podman system service --time=0 unix://" +
            user_socket + " &";
  } else {
    p.fix = "apt-get install podman, then start its service (systemctl --user start podman.socket)";
  }
  facts->podman_why = "podman: " + r.why;
  return p;
}

// Podman's container init (src/cell/docker/podman_init.h): every podman
// cell asks for one, and without it Podman fails each create.
Probe PodmanInitProbe(EngineFacts* facts) {
  Probe p{"podman init", S::kOk, "", "", ""};
  std::string path = docker::PodmanInitPath();
  Status ok = docker::CheckPodmanInit();
  if (ok) {
    p.value = path;
    return p;
  }
  p.status = S::kMissing;
  p.value = path + ": " + ErrnoText(ok.error().err);
  p.detail = "Podman runs it as PID 1 of each container (stop signals, reaping); podman cells are refused "
             "without it";
  p.fix = path == docker::kPodmanDefaultInit ? "apt-get install catatonit"
                                             : "install " + path + ", or fix init_path in containers.conf";
  if (facts->podman_ok) {
    facts->podman_ok = false;
    facts->podman_why = "podman: its container init " + path + " is missing (apt-get install catatonit)";
  }
  return p;
}

bool Executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

// A runtime entry of docker's /info ("Runtimes": {"runsc": {"path": ..., "runtimeArgs": [...]}}).
struct RuntimeEntry {
  std::string path;
  std::vector<std::string> args;
};

std::map<std::string, RuntimeEntry> InfoRuntimes(const nlohmann::json& info) {
  std::map<std::string, RuntimeEntry> out;
  auto it = info.find("Runtimes");
  if (it == info.end() || !it->is_object()) return out;
  for (const auto& [name, rt] : it->items()) {
    RuntimeEntry e;
    if (rt.is_object()) {
      e.path = rt.value("path", std::string());
      for (const auto& a : rt.value("runtimeArgs", nlohmann::json::array())) {
        if (a.is_string()) e.args.push_back(a.get<std::string>());
      }
    }
    out[name] = e;
  }
  return out;
}

bool Has(const std::vector<std::string>& args, const std::string& a) {
  for (const auto& x : args) {
    if (x == a) return true;
  }
  return false;
}

// Usable means what `--isolate=gvisor` needs (src/cell/docker/docker_cell.cc
// CheckEngine): a runtime registered under the name "runsc" whose binary the
// daemon can execute. Its args decide how much of mcpcell's hardening holds.
Probe RegisteredGvisorProbe(EngineFacts* facts, const nlohmann::json& info, const std::string& fix) {
  Probe p{"gvisor runtime", S::kMissing, "", "", fix};
  auto runtimes = InfoRuntimes(info);
  auto it = runtimes.find("runsc");
  if (it == runtimes.end()) {
    std::vector<std::string> others = GvisorRuntimes(ParseDockerRuntimes(info.dump()));
    p.value = others.empty() ? "docker has no runsc runtime"
                             : "docker has gVisor as \"" + others.front() + "\", but mcpcell asks for \"runsc\"";
    p.detail = "mcpcell's gVisor cells use the runtime named runsc";
    facts->gvisor_why = p.value;
    return p;
  }
  // The daemon resolves a bare name on its own PATH; ours is the best guess.
  std::string path = it->second.path.empty() ? "runsc" : it->second.path;
  std::string resolved = path.find('/') == std::string::npos ? FindOnHostPath(path) : path;
  if (!Executable(resolved)) {
    p.value = "docker runtime \"runsc\" points at " + path + ", which is not an executable file";
    p.fix = "apt-get install runsc, or fix the runtime's path in daemon.json and restart dockerd";
    facts->gvisor_why = p.value;
    return p;
  }
  facts->gvisor_runtime = true;
  p.status = S::kOk;
  p.value = "docker runtime \"runsc\" → " + resolved;
  p.fix.clear();
  facts->gvisor_why = "docker has the gVisor runtime \"runsc\" (" + resolved + ")";
  std::vector<std::string> missing;
  if (!Has(it->second.args, "--oci-seccomp")) missing.push_back("--oci-seccomp");
  if (!Has(it->second.args, "--network=none")) missing.push_back("--network=none");
  if (!missing.empty()) {
    p.status = S::kWarn;
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    p.detail = "runtimeArgs lack " + list +
               (Has(missing, "--oci-seccomp") ? ": without --oci-seccomp runsc ignores the container's seccomp "
                                                "profile, so mcpcell's deny list does not apply in the sandbox"
                                              : "") +
               (Has(missing, "--network=none") ? (Has(missing, "--oci-seccomp") ? "; " : ": ") +
                                                     std::string("runsc's own netstack may fail to start on hosts "
                                                                 "like this one, and mcpcell's cells have no "
                                                                 "network anyway")
                                               : "");
    p.fix = "\"runtimes\": {\"runsc\": {\"path\": \"" + resolved +
            "\", \"runtimeArgs\": [\"--network=none\", \"--oci-seccomp\"]}} in daemon.json, then restart dockerd";
  }
  return p;
}

Probe GvisorRuntimeProbe(EngineFacts* facts, const nlohmann::json& info) {
  std::string runsc = FindOnHostPath("runsc");
  std::string fix = "add {\"runtimes\": {\"runsc\": {\"path\": \"" + (runsc.empty() ? "/usr/bin/runsc" : runsc) +
                    "\", \"runtimeArgs\": [\"--network=none\", \"--oci-seccomp\"]}}} to /etc/docker/daemon.json and "
                    "restart dockerd";
  if (facts->docker_ok) return RegisteredGvisorProbe(facts, info, fix);
  Probe p{"gvisor runtime", S::kMissing, "", "", ""};
  // Without a daemon to ask, daemon.json says what it would offer once started.
  auto config = ReadHostFile("/etc/docker/daemon.json");
  std::vector<std::string> names = config ? GvisorRuntimes(ParseDockerRuntimes(*config)) : std::vector<std::string>{};
  p.value = names.empty() ? "docker not reachable; /etc/docker/daemon.json names no runsc runtime"
                          : "docker not reachable; /etc/docker/daemon.json names runtime \"" + names.front() + "\"";
  p.status = names.empty() ? S::kMissing : S::kWarn;
  p.detail = "gVisor cells run through the docker backend with the runsc runtime";
  p.fix = names.empty() ? fix : "start the Docker daemon";
  facts->gvisor_why = "needs a reachable Docker daemon with a runsc runtime";
  return p;
}

}  // namespace

std::vector<Probe> ProbeEngines(EngineFacts* facts) {
  std::vector<Probe> out;
  nlohmann::json info = nlohmann::json::object();
  out.push_back(BinaryProbe("docker", "apt-get install docker.io (the CLI is optional: mcpcell uses the API)",
                            S::kWarn, "not needed by mcpcell itself"));
  out.push_back(DockerSocketProbe(facts, &info));
  Probe podman = BinaryProbe("podman", "apt-get install podman", S::kWarn, "optional");
  bool have_podman = podman.status == S::kOk;
  out.push_back(podman);
  out.push_back(PodmanSocketProbe(facts, have_podman));
  if (have_podman) out.push_back(PodmanInitProbe(facts));
  out.push_back(BinaryProbe("runsc", "apt-get install runsc, or see https://gvisor.dev/docs/user_guide/install/",
                            S::kWarn, "gVisor's runtime; optional"));
  out.push_back(GvisorRuntimeProbe(facts, info));
  out.push_back(BinaryProbe("bwrap", "apt-get install bubblewrap", S::kWarn,
                            "optional: mcpcell does not use it; shown for comparison"));
  return out;
}

}  // namespace mcpcell::doctor
