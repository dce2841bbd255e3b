// `mcpcell gc`: removes what a dead mcpcell left behind — containers whose
// supervisor is gone (by label, in every reachable engine), secrets
// directories, cgroups, unfinished npx/uvx installs and cell id claims (cell_ids.h)
// of dead runs, records of runs that no longer run (cell_record.h) and the
// oldest stderr logs (stderr_log.h) — and says, for each kind, how many it
// checked and how many it removed. `mcpcell run` does the same before each
// cell (and each npx install); this command is for when no run follows
// (cron, after a crash).

#include <CLI/CLI.hpp>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cell/cell_ids.h"
#include "cell/cell_record.h"
#include "cell/docker/container_net.h"
#include "cell/docker/dns_report.h"
#include "cell/docker/engine_client.h"
#include "cell/docker/engine_endpoint.h"
#include "cell/docker/reaper.h"
#include "cell/docker/run_dirs.h"
#include "cell/docker/secrets_dir.h"
#include "cell/docker/stdio_fifos.h"
#include "cell/native/cgroup.h"
#include "cell/stderr_log.h"
#include "cli/commands.h"
#include "source/npx_install.h"
#include "source/uvx_install.h"
#include "util/json_text.h"
#include "util/diag.h"
#include "util/state_dir.h"

namespace mcpcell {
namespace {

struct GcReport {
  nlohmann::json json = nlohmann::json::object();
  int failures = 0;

  void Add(const std::string& key, const std::string& what, const std::string& where, SweepCount c) {
    json[key] = {{"checked", c.checked}, {"removed", c.removed}, {"where", where}};
    SayAs("gc", what + " (" + where + "): " + std::to_string(c.checked) + " checked, " + std::to_string(c.removed) +
                    " removed");
  }
};

void ReapContainers(GcReport* report) {
  for (auto engine : {docker::Engine::kDocker, docker::Engine::kPodman}) {
    std::string name = docker::ToString(engine);
    auto sock = docker::EngineSocket(engine);
    if (!sock) {
      SayAs("gc", name + ": " + sock.error().Message());
      report->json[name] = {{"reachable", false}, {"error", sock.error().Message()}};
      continue;
    }
    auto removed = docker::ReapOrphans(docker::EngineClient(*sock));
    if (!removed) {
      bool down = docker::IsEngineUnreachable(removed.error());
      SayAs("gc", name + ": " + (down ? "not reachable at " + *sock + ", nothing to do" : removed.error().Message()));
      report->json[name] = {{"reachable", !down}, {"error", removed.error().Message()}};
      if (!down) ++report->failures;
      continue;
    }
    for (const auto& c : *removed) SayAs("gc", name + ": removed orphaned container " + c);
    SayAs("gc", name + ": " + std::to_string(removed->size()) + " orphaned container(s) removed");
    report->json[name] = {{"reachable", true}, {"removed", *removed}};
  }
}

// Our entries in /dev/shm named mcpcell-*: the per-run secrets, stdio,
// egress directories and seccomp files of container runs (docker/run_dirs.h).
int CountOwnShmEntries() {
  int n = 0;
  DIR* d = ::opendir("/dev/shm");
  if (d == nullptr) return 0;
  while (dirent* e = ::readdir(d)) {
    struct stat st{};
    std::string name = e->d_name;
    if (name.rfind("mcpcell-", 0) != 0 || name.rfind("mcpcell-ids", 0) == 0) continue;
    if (::lstat(("/dev/shm/" + name).c_str(), &st) == 0 && st.st_uid == ::geteuid()) ++n;
  }
  ::closedir(d);
  return n;
}

void ReapStateDir(GcReport* report) {
  std::string state = StateDirForThisUser();
  auto cells = OpenStateDir("cells");
  auto logs = OpenStateDir("logs");
  if (!cells || !logs) {
    const Error& e = !cells ? cells.error() : logs.error();
    SayAs("gc", "state directory: " + e.Message());
    report->json["state_dir"] = {{"error", e.Message()}};
    ++report->failures;
    return;
  }
  report->Add("cell_records", "records of running cells, for 'mcpcell ps'", CellRecordDir(state),
              ReapCellRecords(cells->get()));
  std::vector<std::string> live;
  for (const auto& l : ListCellRecords(cells->get())) {
    if (l.alive) live.push_back(l.record.id);
  }
  report->Add("cell_logs", "stderr logs, the newest " + std::to_string(kLogsKept) + " kept", CellLogDir(state),
              PruneCellLogs(logs->get(), kLogsKept, live));
}

int Gc(bool as_json) {
  GcReport report;
  ReapContainers(&report);
  SweepCount shm;
  shm.checked = CountOwnShmEntries();
  shm.removed = docker::ReapSecretDirs() + docker::ReapStdioDirs() + docker::ReapEgressDirs() + docker::ReapSeccompFiles() +
                docker::ReapDnsReportDirs();
  report.Add("temp_dirs", "secrets/stdio/egress dirs and seccomp files of container runs", "/dev/shm/mcpcell-*", shm);
  // A supervisor killed before it started its cgroup janitor (during cell
  // setup) leaves its cell's cgroups; the next native run would reap them.
  SweepCount cgroups;
  cgroups.removed = ReapStaleCgroups(&cgroups.checked);
  report.Add("cgroups", "cell cgroups", "the cgroup tree", cgroups);
  if (auto cache = NpxCacheRoot(); cache.ok()) {
    SweepCount installs;
    installs.removed = RemoveAbandonedInstalls(*cache, &installs.checked);
    report.Add("npx_installs", "unfinished npx installs", *cache, installs);
  }
  if (auto cache = UvxCacheRoot(); cache.ok()) {
    SweepCount installs;
    installs.removed = RemoveAbandonedInstalls(*cache, &installs.checked);
    report.Add("uvx_installs", "unfinished uvx installs", *cache, installs);
  }
  SweepCount claims;
  claims.removed = ReapCellIdClaims(CellIdDirForThisUser(), &claims.checked);
  report.Add("cell_id_claims", "cell id claims", CellIdDirForThisUser(), claims);
  ReapStateDir(&report);
  if (as_json) std::printf("%s\n", JsonText(report.json, 2).c_str());
  return report.failures == 0 ? 0 : 1;
}

}  // namespace

void AddGcCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("gc", "Remove containers, temp files, records and old logs a dead mcpcell left "
                                       "behind; say what was checked and removed");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "also print the counts as JSON on stdout");
  cmd->callback([exit_code, json] { *exit_code = Gc(*json); });
}

}  // namespace mcpcell
