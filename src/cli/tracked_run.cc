#include "cli/tracked_run.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "cell/backend.h"
#include "util/state_dir.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

void WarnUntracked(const Error& e) {
  mcpcell::Warn("this run is not listed by 'mcpcell ps' and has no log: " + e.Message());
}

CellRecord RecordOf(const LaunchPlan& plan, const std::string& id, const std::string& log) {
  CellRecord r;
  r.id = id;
  r.pid = static_cast<int>(::getpid());
  r.pid_start = ProcessStartTicks(r.pid);
  r.client_pid = static_cast<int>(::getppid());
  r.started = static_cast<std::int64_t>(std::time(nullptr));
  r.server = plan.server;
  if (r.server.empty() && !plan.spec.argv.empty()) r.server = plan.spec.argv.front();
  r.backend = plan.spec.backend;
  r.network = ToString(plan.spec.network.mode);
  r.log = log;
  if (plan.explain.contains("install")) r.npx_cache_dir = plan.explain["install"].value("cache_dir", std::string());
  return r;
}

}  // namespace

std::unique_ptr<TrackedRun> TrackedRun::Start(const LaunchPlan& plan) {
  std::string state = StateDirForThisUser();
  auto cells = OpenStateDir("cells");
  if (!cells) {
    WarnUntracked(cells.error());
    return nullptr;
  }
  auto logs = OpenStateDir("logs");
  if (!logs) {
    WarnUntracked(logs.error());
    return nullptr;
  }
  (void)ReapCellRecords(cells->get());
  std::vector<std::string> live;
  for (const auto& l : ListCellRecords(cells->get())) {
    if (l.alive) live.push_back(l.record.id);
  }
  (void)PruneCellLogs(logs->get(), kLogsKept - 1, live);
  auto run = std::make_unique<TrackedRun>();
  std::string id = NewRunRecordId();
  // The server's stderr is masked as its results are (redact or block):
  // what a result may not carry to the client, a log line may not either.
  std::optional<SecretPolicy> scan;
  const SecretPolicy& secrets = plan.spec.relay.secrets;
  if (plan.spec.relay.on && (secrets.to_client == SecretMode::kRedact || secrets.to_client == SecretMode::kBlock)) {
    scan = secrets;
  }
  if (auto ok = run->log_.Start(std::move(*logs), id, std::move(scan)); !ok) {
    WarnUntracked(ok.error());
    return nullptr;
  }
  auto record = LiveCellRecord::Write(std::move(*cells), RecordOf(plan, id, CellLogDir(state) + "/" + id + ".log"));
  if (!record) {
    WarnUntracked(record.error());
    return run;  // the log alone still helps
  }
  run->record_ = std::move(*record);
  return run;
}

}  // namespace mcpcell
