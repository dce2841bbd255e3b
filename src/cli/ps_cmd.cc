// `mcpcell ps` (this user's running cells) and `mcpcell logs ID` (a run's
// stderr copy): cell/cell_record.h and cell/stderr_log.h say what is kept
// where. Each user sees their own: the records and logs live in a 0700
// directory of their own (util/state_dir.h).
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cell/cell_record.h"
#include "cell/stderr_log.h"
#include "util/terminal_text.h"
#include "cli/commands.h"
#include "core/exit_codes.h"
#include "util/json_text.h"
#include "util/state_dir.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

std::string Uptime(std::int64_t started) {
  std::int64_t s = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::time(nullptr)) - started);
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
  return std::to_string(s / 3600) + "h" + std::to_string(s % 3600 / 60) + "m";
}

// The server name as a table cell: bounded, and no control characters (a
// command name is the user's, but it reaches a terminal).
std::string Shown(std::string s, std::size_t width) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return s.size() > width ? s.substr(0, width - 3) + "..." : s;
}

int Ps(bool as_json) {
  std::string dir = CellRecordDir(StateDirForThisUser());
  auto fd = OpenStateDir("cells");
  if (!fd) {
    SayAs("ps", fd.error().Message());
    return kExitUsage;
  }
  std::vector<CellRecord> live;
  for (auto& l : ListCellRecords(fd->get())) {
    if (l.alive) live.push_back(std::move(l.record));  // a dead pid's record: ignored (gc removes it)
  }
  std::sort(live.begin(), live.end(), [](const CellRecord& a, const CellRecord& b) { return a.started < b.started; });
  if (as_json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : live) {
      nlohmann::json j = ToJson(r);
      j["uptime_s"] = static_cast<std::int64_t>(std::time(nullptr)) - r.started;
      out.push_back(j);
    }
    std::printf("%s\n", JsonText(out, 2).c_str());
    return 0;
  }
  std::printf("%-12s  %-44s  %-10s  %-8s  %-7s  %-10s  %s\n", "CELL", "SERVER", "CLIENT", "UPTIME", "BACKEND",
              "NETWORK", "LOG");
  for (const auto& r : live) {
    std::printf("%-12s  %-44s  %-10d  %-8s  %-7s  %-10s  %s\n", r.id.c_str(), Shown(r.server, 44).c_str(),
                r.client_pid, Uptime(r.started).c_str(), r.backend.c_str(), r.network.c_str(),
                Shown(r.log, 200).c_str());
  }
  return 0;
}

// Copies <dir>/<name> to stdout (filtered on a terminal); false when there is no such log of ours.
bool PrintLog(int dir, const std::string& name, TerminalFilter* filter, bool tty) {
  UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return false;
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return false;
  char buf[64 * 1024];
  for (ssize_t n; (n = ::read(fd.get(), buf, sizeof buf)) > 0;) {
    std::string_view chunk(buf, static_cast<std::size_t>(n));
    std::string shown = tty ? filter->Filter(chunk) : std::string(chunk);
    std::fwrite(shown.data(), 1, shown.size(), stdout);
  }
  return true;
}

int Logs(const std::string& cell) {
  if (cell.empty() || cell.size() > 12 || cell.find_first_not_of("0123456789abcdef") != std::string::npos) {
    SayAs("logs", "'" + cell + "' is no cell id (12 hex digits, or a unique start of one, as 'mcpcell ps' shows)");
    return kExitUsage;
  }
  std::string dir = CellLogDir(StateDirForThisUser());
  auto fd = OpenStateDir("logs");
  if (!fd) {
    SayAs("logs", fd.error().Message());
    return kExitUsage;
  }
  std::vector<std::string> ids;
  for (const auto& name : ListCellLogIds(fd->get())) {
    if (name.rfind(cell, 0) == 0) ids.push_back(name);
  }
  if (ids.size() != 1) {
    SayAs("logs", fmt::format("{} cell id starts with '{}' in {} (see 'mcpcell ps'; the logs of the newest {} "
                              "runs are kept)", ids.empty() ? "no" : "more than one", cell, dir, kLogsKept));
    return kExitUsage;
  }
  bool tty = ::isatty(STDOUT_FILENO) != 0;
  TerminalFilter filter;
  (void)PrintLog(fd->get(), ids[0] + ".log.1", &filter, tty);  // the older part, when the log was rotated
  (void)PrintLog(fd->get(), ids[0] + ".log", &filter, tty);
  if (tty) std::fputs(filter.Flush().c_str(), stdout);
  return 0;
}

}  // namespace

void AddPsCommand(CLI::App& app, int* exit_code) {
  auto* ps = app.add_subcommand("ps", "List this user's running cells (id, server, client pid, uptime, backend, "
                                      "network, log)");
  auto json = std::make_shared<bool>(false);
  ps->add_flag("--json", *json, "print the list as JSON");
  ps->callback([exit_code, json] { *exit_code = Ps(*json); });
  auto* logs = app.add_subcommand("logs", "Print a cell's stderr (the server's and mcpcell's lines), kept for the "
                                          "newest runs");
  auto cell = std::make_shared<std::string>();
  logs->add_option("cell", *cell, "the cell id 'mcpcell ps' shows (or a unique start of it)")->required();
  logs->callback([exit_code, cell] { *exit_code = Logs(*cell); });
}

}  // namespace mcpcell
