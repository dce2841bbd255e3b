// `mcpcell doctor [--json]`: what this machine supports for isolation.
// Unlike `run`, doctor is not on an MCP client's stdio, so its report goes to stdout.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "doctor/probe.h"

namespace mcpcell {

void AddDoctorCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "doctor", "Show what this machine supports for isolation (exit 0 when native cells work)");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print {\"checks\":[...],\"backends\":{...}} instead of a table");
  cmd->callback([exit_code, json] {
    doctor::MachineReport report = doctor::ProbeMachine();
    std::string text = *json ? doctor::ReportToJson(report).dump(2) + "\n" : doctor::FormatReportTable(report);
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    *exit_code = report.backends["native"].usable ? 0 : 1;
  });
}

}  // namespace mcpcell
