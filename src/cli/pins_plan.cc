#include "cli/pins_plan.h"

#include <unistd.h>

#include <filesystem>

#include "core/cell_spec.h"
#include "cli/launch_plan.h"
#include "guard/pin_guard.h"
#include "guard/pin_store.h"
#include "profile/permission_profile.h"
#include "source/server_ref.h"
#include "util/state_dir.h"

namespace mcpcell {

std::string PinServerKey(const ServerRef& ref, const std::string& cwd) {
  switch (ref.kind) {
    case ServerRef::Kind::kNpx: return "npx://" + ref.package;
    case ServerRef::Kind::kUvx: return "uvx://" + ref.package;
    case ServerRef::Kind::kDocker: return "docker://" + ref.package;
    case ServerRef::Kind::kRegistry: return "registry://" + ref.package;
    case ServerRef::Kind::kCommand: break;
  }
  std::string key = "command://";
  for (std::size_t i = 0; i < ref.args.size(); ++i) {
    std::string word = ref.args[i];
    // "./server.js" names a different program in every directory.
    if (word.find('/') != std::string::npos && word[0] != '/' && !cwd.empty()) {
      word = (std::filesystem::path(cwd) / word).lexically_normal().string();
    }
    key += (i == 0 ? "" : " ") + ShellQuote(word);
  }
  return key;
}

Status LowerPins(const ServerRef& ref, const PermissionProfile& profile, const LaunchPlan& plan, RelaySpec* out) {
  const auto& mode = profile.ext.pins_mode;
  if (mode == "off" && profile.ext.pins_poisoning == "block") {
    return MakeError("the profile " + profile.name, "mcpcell.pins",
                     "\"poisoning\": \"block\" judges tools when they are pinned, and \"mode\": \"off\" pins none; "
                     "drop one of them");
  }
  if (mode == "off") return {};
  bool isolated = plan.action == LaunchPlan::Action::kIsolate;
  // The relay sits on every backend's stdio (cell/backend.cc), so pins hold
  // wherever it is on.
  bool can = out->on && isolated;
  // "poisoning": "block" asks for the checks as much as mode "on" does
  // (adv8: accepted and ignored without a relay).
  bool asked = mode == "on" || profile.ext.pins_poisoning == "block";
  if (!can && asked) {
    std::string where = "the profile " + profile.name + " sets " +
                        (mode == "on" ? "mcpcell.pins.mode \"on\", " : "mcpcell.pins.poisoning \"block\", ");
    if (!out->on) return MakeError("--relay=off", "", where + "which only the relay enforces; drop --relay=off or set it \"off\"");
    return MakeError("run without a cell", plan.rule, where + "which a server run without a cell is not held to");
  }
  if (!can) return {};
  char buf[4096];
  std::string cwd = ::getcwd(buf, sizeof buf) != nullptr ? buf : "";
  out->pins = true;
  out->pins_server = PinServerKey(ref, cwd);
  out->pins_dir = DefaultPinsDir();
  out->pins_block_poisoning = profile.ext.pins_poisoning == "block";
  if (out->pins_dir.empty()) {
    return MakeError("find the pin directory", "", "neither XDG_STATE_HOME nor HOME is set; set one, or set "
                                                   "mcpcell.pins.mode \"off\" in the profile");
  }
  // The pins' state directory is hidden from every launch's cells only if
  // it is on the account's list (adv24: pins under an unlisted
  // XDG_STATE_HOME were written by a later cell granted it).
  if (auto listed = RememberStateDir(std::filesystem::path(out->pins_dir).parent_path().string()); !listed) {
    Error e = listed.error();
    e.detail += "; tool pins are kept only in a state directory every launch hides. Fix that, or set "
                "mcpcell.pins.mode \"off\" in the profile";
    return e;
  }
  return {};
}

}  // namespace mcpcell
