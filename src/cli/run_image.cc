#include "cli/run_image.h"

#include <cstdio>

#include "audit/events.h"
#include "cell/docker/image_cell.h"
#include "cli/exit_codes.h"
#include "source/image_ref.h"

namespace mcpcell {
namespace {

void Say(const std::string& line) { std::fprintf(stderr, "mcpcell: %s\n", line.c_str()); }

}  // namespace

int RunImagePlan(const LaunchPlan& plan, const RunContext& ctx,
                 const std::function<void(const nlohmann::json&)>& record) {
  const auto image_json = plan.explain.value("image", nlohmann::json::object());
  auto image = ParseImageRef(image_json.value("reference", std::string()));
  if (!image) {
    Say("docker:// source: " + image.error().Message());
    return kExitUsage;
  }
  CellResult r = docker::RunImageCell(plan.level, *image, image_json.value("user_given", false), plan.spec, ctx,
                                      [&](const nlohmann::json& launch) {
                                        nlohmann::json event = LaunchEvent(plan, launch.value("cell_id", ""), 0);
                                        for (const auto& [k, v] : launch.items()) {
                                          if (!event.contains(k)) event[k] = v;
                                        }
                                        record(event);
                                      });
  int signal = r.exit_code > 128 && r.exit_code < 128 + 65 && !r.error && !r.timed_out ? r.exit_code - 128 : 0;
  nlohmann::json exit_event = ExitEvent(plan, r.cell_id, r.exit_code, signal, r.duration, r.peak_memory_bytes);
  if (r.error) exit_event["error"] = r.error->Message();
  if (r.timed_out) exit_event["timed_out"] = true;
  record(exit_event);
  if (r.error) {
    std::string kind = r.exit_code == kExitIsolationUnavailable ? "isolation unavailable"
                       : r.exit_code == kExitNotFound           ? "server not found"
                       : r.exit_code == kExitCannotExec         ? "server not executable"
                                                                : "cell setup failed";
    Say(kind + ": " + r.error->Message());
  }
  return r.exit_code;
}

}  // namespace mcpcell
