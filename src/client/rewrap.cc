#include "client/rewrap.h"

#include <string>
#include <vector>

namespace mcpcell {
namespace {

using nlohmann::ordered_json;

/// mcpcell's words of `args` (before "--") as wrap writes them.
struct RunWords {
  std::vector<std::string> policies;  ///< each --policy value, in order
  std::vector<std::string> unknown;   ///< options wrap never writes (--relay=off, -v, ...)
};

/// Whether args[i] is "--policy" or "--env" with its value in the next word
/// (not "--", which would end mcpcell's words instead).
bool TakesNext(const std::vector<std::string>& args, std::size_t i, const char* option) {
  return args[i] == option && i + 1 < args.size() && args[i + 1] != "--";
}

RunWords Read(const std::vector<std::string>& args) {
  RunWords r;
  for (std::size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    const std::string& w = args[i];
    if (w == "--isolate" || w.rfind("--env=", 0) == 0) continue;
    if (TakesNext(args, i, "--env")) {
      ++i;
    } else if (w.rfind("--policy=", 0) == 0) {
      r.policies.push_back(w.substr(9));
    } else if (TakesNext(args, i, "--policy")) {
      r.policies.push_back(args[++i]);
    } else if (!w.empty() && w[0] == '-') {
      r.unknown.push_back(w);  // CLI11 reads an option after the SOURCE too
    }
  }
  return r;
}

std::string Joined(const std::vector<std::string>& v, const std::string& prefix = "") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + prefix + s;
  return out;
}

/// `args` with every --policy option before "--" dropped and --policy=P put
/// where wrap puts it (after "run" and "--isolate").
std::vector<std::string> WithPolicy(const std::vector<std::string>& args, const std::string& policy) {
  std::vector<std::string> out;
  bool server = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    server = server || args[i] == "--";
    if (!server && args[i].rfind("--policy=", 0) == 0) continue;
    if (!server && TakesNext(args, i, "--policy")) {
      ++i;
      continue;
    }
    out.push_back(args[i]);
  }
  std::size_t at = out.size() > 1 && out[1] == "--isolate" ? 2 : 1;
  out.insert(out.begin() + static_cast<long>(at), "--policy=" + policy);
  return out;
}

}  // namespace

WrapOutcome Rewrap(const ordered_json& entry, const WrapOptions& opts) {
  std::string cmd = entry["command"].get<std::string>();
  // The command is kept: the user may run another mcpcell on purpose.
  std::string other = cmd == opts.mcpcell || cmd == "mcpcell" ? "" : " (" + cmd + ", not this one: " + opts.mcpcell + ")";
  std::string asked = opts.policy ? ", so it does not run under --policy=" + *opts.policy : "";
  std::vector<std::string> args;
  bool strings = entry.contains("args") && entry["args"].is_array();
  for (const auto& a : strings ? entry["args"] : ordered_json::array()) {
    strings = strings && a.is_string();
    if (strings) args.push_back(a.get<std::string>());
  }
  if (!strings || args.empty() || args[0] != "run") {
    return {WrapOutcome::Kind::kLeft, {}, "already starts mcpcell" + other + ", but not as `mcpcell run ...`" + asked +
                                              ". Check it, or `mcpcell client unwrap` it (or put its "
                                              "server command back by hand) and wrap again"};
  }
  RunWords words = Read(args);
  if (!words.unknown.empty()) {
    return {WrapOutcome::Kind::kLeft, {}, "already runs through mcpcell" + other + " with options wrap does not write (" +
                                              Joined(words.unknown) + ")" + asked + ". Check them, or "
                                              "remove them (or `mcpcell client unwrap` it) and wrap again"};
  }
  if (!opts.policy || (words.policies.size() == 1 && words.policies[0] == *opts.policy)) {
    std::string under = words.policies.empty() ? "" : " with " + Joined(words.policies, "--policy=");
    if (!opts.policy && !words.policies.empty()) under += " (kept: no --policy was given)";
    return {WrapOutcome::Kind::kAlready, {}, "already runs through mcpcell" + other + under};
  }
  WrapOutcome out{WrapOutcome::Kind::kWrapped, entry, {}};
  out.entry["args"] = WithPolicy(args, *opts.policy);
  out.note = "already ran through mcpcell" + other + (words.policies.empty() ? " with no --policy" : " with " +
             Joined(words.policies, "--policy=")) + "; now with --policy=" + *opts.policy +
             ", its other options kept";
  return out;
}

}  // namespace mcpcell
