#include "client/wrap_env.h"

#include <algorithm>
#include <cctype>

#include "util/code_injecting_env.h"

namespace mcpcell {
namespace {

using nlohmann::ordered_json;

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

void AddOnce(std::vector<std::string>* v, const std::string& s) {
  if (std::find(v->begin(), v->end(), s) == v->end()) v->push_back(s);
}

std::string NotPlain(const std::string& name) {
  return "environment variable name '" + name + "' is not a plain NAME ([A-Za-z_][A-Za-z0-9_]*)";
}

/// Whether `name` must be set in the cell only, never on mcpcell: a variable
/// that runs other code, or that picks where code and config are read from
/// (a HOME with another ~/.npmrc, a PATH with another npm: mcpcell's host
/// tools run outside any cell).
bool InCellOnly(const std::string& name) { return InjectsCode(name) || ChoosesWhatRuns(name); }

/// Whether `name` looks like it holds a secret (npm_config__authToken): its
/// value must not go into argv, which every user can read.
bool LooksSecret(const std::string& name) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const char* word : {"TOKEN", "AUTH", "PASS", "SECRET", "KEY", "CRED"}) {
    if (upper.find(word) != std::string::npos) return true;
  }
  return false;
}

/// Why an in-cell-only `name` of the "env" block cannot be moved into args
/// ("" when it can): only a JSON entry's own string value can, and one with a
/// client variable (${...}) would be expanded by rules of args, not env.
std::string Unmovable(const std::string& name, const ordered_json& value, bool values_known) {
  std::string why = !values_known           ? "mcpcell edits only command and args in this file"
                    : LooksSecret(name)     ? "its name says it holds a secret, which args would show to every user"
                    : !value.is_string()    ? "its value is not a string"
                    : value.get<std::string>().find("${") != std::string::npos
                        ? "its value holds a client variable (${...}), which clients may expand differently in args"
                        : "";
  if (why.empty()) return {};
  return "its env sets " + name + ", which the client would set on mcpcell itself (and on the tools mcpcell runs "
         "outside the cell), not only on the server, and it cannot be moved into args (" + why +
         "). Remove " + name + " from the entry's env, wrap, then add --env=" + name +
         "=VALUE to the wrapped args to set it in the cell only";
}

/// The "envFile" names (VS Code): read through opts, each passed by name like
/// the env block's; "" or why the entry is left.
std::string AddEnvFile(const ordered_json& entry, const WrapOptions& opts, WrapEnv* out) {
  if (!entry.contains("envFile")) return {};
  const ordered_json& f = entry["envFile"];
  std::string path = f.is_string() ? f.get<std::string>() : f.dump();
  std::string lost = "the client loads its variables into mcpcell, not into the server. Move them into \"env\", "
                     "or make envFile an absolute path to a readable file, and wrap again";
  if (!f.is_string() || path.empty() || path[0] != '/' || path.find("${") != std::string::npos) {
    return "its envFile " + path + " is not an absolute path mcpcell can read now; " + lost;
  }
  if (!opts.env_file_names) return "its envFile " + path + " was not read; " + lost;
  auto names = opts.env_file_names(path);
  if (!names.ok()) return "its envFile " + path + ": " + names.error().Message() + "; " + lost;
  for (const auto& n : *names) {
    if (InCellOnly(n)) {
      return "its envFile " + path + " sets " + n + ", which the client would set on mcpcell itself (and on the "
             "tools mcpcell runs outside the cell), not only on the server. Move " + n +
             " out of the file, wrap, then add --env=" + n + "=VALUE to the wrapped args to set it in the cell only";
    }
    AddOnce(&out->options, "--env=" + n);
    out->from_file.push_back(n);
  }
  return {};
}

}  // namespace

bool IsEnvName(const std::string& n) {
  if (n.empty() || (n[0] >= '0' && n[0] <= '9')) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

WrapEnv PlanWrapEnv(const ordered_json& entry, const std::vector<std::string>& docker_names, const WrapOptions& opts) {
  WrapEnv out;
  const bool has_env = entry.contains("env") && entry["env"].is_object();
  for (const auto& n : docker_names) {
    std::string name = n.substr(0, n.find('='));
    if (!IsEnvName(name)) return {{}, {}, {}, NotPlain(name)};
    // A bare `-e NAME` of a variable the env block moves: the moved one carries it.
    if (n == name && InCellOnly(name) && has_env && entry["env"].contains(name)) continue;
    AddOnce(&out.options, "--env=" + n);
  }
  if (has_env) {
    for (const auto& [k, v] : entry["env"].items()) {
      // A key with "=" would become --env=NAME=VALUE: a value in argv.
      if (!IsEnvName(k)) return {{}, {}, {}, NotPlain(k)};
      if (!InCellOnly(k)) {
        AddOnce(&out.options, "--env=" + k);
        continue;
      }
      if (auto why = Unmovable(k, v, opts.env_values); !why.empty()) return {{}, {}, {}, why};
      AddOnce(&out.options, "--env=" + k + "=" + v.get<std::string>());
      out.moved.push_back(k);
    }
  }
  if (auto why = AddEnvFile(entry, opts, &out); !why.empty()) return {{}, {}, {}, why};
  return out;
}

std::vector<std::string> NpmConfigSettings(const ordered_json& entry) {
  std::vector<std::string> out;
  if (!entry.contains("env") || !entry["env"].is_object()) return out;
  for (const auto& [k, v] : entry["env"].items()) {
    std::string lower = k;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower.rfind("npm_config_", 0) == 0) out.push_back(k);
  }
  return out;
}

std::string WrapEnvNote(const WrapEnv& env, const ordered_json& entry) {
  std::string note;
  if (!env.moved.empty()) {
    note += "; " + Joined(env.moved) + " moved from \"env\" into args (--env=NAME=VALUE): set in the cell only, "
            "not on mcpcell, which the client gives \"env\"; the value is now in the command line, which other "
            "users of this machine can read";
  }
  if (entry.contains("envFile")) {
    note += "; envFile " + entry["envFile"].get<std::string>() + ": its names now (" +
            (env.from_file.empty() ? std::string("none") : Joined(env.from_file)) +
            ") are passed with --env; a name added to it later is not (add --env=NAME to args)";
  }
  return note;
}

}  // namespace mcpcell
