#include "cli/run_image.h"

#include <cstdio>

#include "cli/cell_events.h"
#include "cell/docker/image_cell.h"
#include "core/exit_codes.h"
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
                                      RecordLaunch(plan, record));
  return FinishRun(plan, r, record);
}

}  // namespace mcpcell
