#include "cell/docker/reaper.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cell/docker/create_body.h"

namespace mcpcell::docker {

std::string ProcessStartTime(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  // comm (field 2) may contain spaces and ')': fields restart after the last ')'.
  auto close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) return field;
  }
  return {};
}

bool SupervisorAlive(const std::string& pid_label, const std::string& start_label) {
  char* end = nullptr;
  long pid = std::strtol(pid_label.c_str(), &end, 10);
  if (end == pid_label.c_str() || *end != '\0' || pid <= 0) return false;
  std::string start = ProcessStartTime(pid);
  if (start.empty()) {
    // Unreadable is not gone: /proc mounted hidepid=2 (or ProtectProc=
    // invisible) hides other users' processes, and a run that took root's
    // supervisor for dead removed its live cell (adv23). Only ESRCH says no
    // such process; a hidden one (EPERM) is kept, start time unknown.
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
  }
  return start_label.empty() || start == start_label;  // a reused pid has another start time
}

std::string OwnPidNamespace() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/ns/pid", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

bool Reapable(const std::string& pid_label, const std::string& start_label, const std::string& pidns_label,
              const std::string& own_pidns) {
  if (pidns_label.empty() || own_pidns.empty() || pidns_label != own_pidns) return false;
  return !SupervisorAlive(pid_label, start_label);
}

namespace {

// Force-removes `id`. Another remover may be at it (the dead supervisor's
// watcher, a second gc): the engine then answers 409 "removal ... is already
// in progress", and we wait, bounded, until it is gone (seen as a flaky gc
// failure in docker_faults).
Status RemoveContainer(const EngineClient& engine, const std::string& id) {
  auto del = engine.Call("DELETE", "/containers/" + id + "?force=1&v=1");
  if (!del) return del.error();
  if (del->status == 204 || del->status == 404) return {};
  if (del->status != 409 || EngineMessage(*del).find("already in progress") == std::string::npos) {
    return MakeError("remove orphaned container", id, EngineMessage(*del));
  }
  for (int i = 0; i < 100; ++i) {
    auto r = engine.Call("GET", "/containers/" + id + "/json");
    if (!r) return r.error();
    if (r->status == 404) return {};
    ::usleep(50'000);
  }
  return MakeError("remove orphaned container", id, "another removal of it is still under way after 5 s");
}

}  // namespace

Result<std::vector<std::string>> ReapOrphans(const EngineClient& engine) {
  nlohmann::json filters{{"label", {kLabelSupervisor}}};
  auto r = engine.Call("GET", "/containers/json?all=1&filters=" + UrlEncode(filters.dump()));
  if (!r) return r.error();
  if (r->status != 200) return MakeError("list mcpcell containers", "", EngineMessage(*r));
  auto list = nlohmann::json::parse(r->body, nullptr, false);
  if (!list.is_array()) return MakeError("list mcpcell containers", "", "engine sent no JSON array");
  std::vector<std::string> removed;
  std::string own_pidns = OwnPidNamespace();
  for (const auto& c : list) {
    const auto& labels = c.value("Labels", nlohmann::json::object());
    std::string pid = labels.value(kLabelSupervisor, "");
    std::string start = labels.value(kLabelSupervisorStart, "");
    if (!Reapable(pid, start, labels.value(kLabelSupervisorPidNs, ""), own_pidns)) continue;
    std::string id = c.value("Id", "");
    if (id.empty()) continue;
    MCPCELL_TRY(RemoveContainer(engine, id));
    std::string name = id.substr(0, 12);
    if (c.contains("Names") && c["Names"].is_array() && !c["Names"].empty()) {
      name = c["Names"][0].get<std::string>();
      if (!name.empty() && name[0] == '/') name.erase(0, 1);
    }
    removed.push_back(name);
  }
  return removed;
}

}  // namespace mcpcell::docker
