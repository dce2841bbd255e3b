// Rendering a MachineReport: JSON for tools, a table for people.

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "doctor/probe.h"

namespace mcpcell::doctor {

nlohmann::json ReportToJson(const MachineReport& report) {
  nlohmann::json checks = nlohmann::json::array();
  for (const Probe& p : report.checks) {
    checks.push_back({{"name", p.name},
                      {"status", StatusName(p.status)},
                      {"value", p.value},
                      {"detail", p.detail},
                      {"fix", p.fix}});
  }
  nlohmann::json backends = nlohmann::json::object();
  for (const auto& [name, verdict] : report.backends) {
    backends[name] = {{"usable", verdict.usable}, {"why", verdict.why}};
  }
  return {{"checks", checks}, {"backends", backends}};
}

std::string FormatReportTable(const MachineReport& report) {
  size_t width = 5;  // "check"
  for (const Probe& p : report.checks) width = std::max(width, p.name.size());
  std::string out = fmt::format("{:<{}}  {:<7}  {}\n", "check", width, "status", "value");
  for (const Probe& p : report.checks) {
    out += fmt::format("{:<{}}  {:<7}  {}\n", p.name, width, StatusName(p.status), p.value);
    if (p.status == Probe::Status::kOk) continue;
    std::string indent(width + 2, ' ');
    if (!p.detail.empty()) out += fmt::format("{}why: {}\n", indent, p.detail);
    if (!p.fix.empty()) out += fmt::format("{}fix: {}\n", indent, p.fix);
  }
  out += "\nbackends:\n";
  for (const char* name : {"native", "docker", "podman", "gvisor"}) {
    auto it = report.backends.find(name);
    if (it == report.backends.end()) continue;
    out += fmt::format("  {:<7} {:<4} {}\n", name, it->second.usable ? "yes" : "no", it->second.why);
  }
  return out;
}

}  // namespace mcpcell::doctor
