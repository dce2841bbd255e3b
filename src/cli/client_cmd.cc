// `mcpcell client list | wrap CLIENT | unwrap CLIENT`: finds the MCP client
// configs on this machine and rewrites their stdio servers to start through
// mcpcell (and back). What is rewritten and why: src/client/wrap_entry.h and
// docs/CLIENTS.md; how the file is written: src/client/config_file.h.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "util/terminal_text.h"
#include "client/config_edit.h"
#include "client/config_file.h"
#include "client/env_file_names.h"
#include "client/known_clients.h"
#include "client/toml_edit.h"
#include "client/yaml_edit.h"
#include "policy/policy.h"
#include "cli/commands.h"
#include "core/exit_codes.h"
#include "util/diag.h"
#include "util/home_path.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

struct ClientRequest {
  std::string client;
  std::optional<std::string> file;
  std::optional<std::string> policy;
  bool dry_run = false;
  bool json = false;
};

/// Text from a config file on its way to the terminal: control characters
/// made visible (a copied-in server name must not drive the terminal).
std::string Shown(const std::string& text) {
  TerminalFilter f;
  return f.Filter(text) + f.Flush();
}

/// "mcpcell client: LINE", control characters made visible.
void SayClient(const std::string& line) { SayAs("client", Shown(line)); }

std::vector<KnownClient> Clients() {
  std::string home = CallerHome();
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  return KnownClients(home, xdg != nullptr && xdg[0] == '/' ? std::string(xdg) : home + "/.config");
}

std::string Ids() {
  std::string ids;
  for (const auto& c : Clients()) ids += (ids.empty() ? "" : ", ") + c.id;
  return ids;
}

nlohmann::json ListOne(const KnownClient& c) {
  nlohmann::json j{{"client", c.id}, {"name", c.name}, {"path", c.path}, {"format", ToString(c.format)},
                   {"servers_key", c.servers_key}};
  std::error_code ec;
  if (!fs::exists(c.path, ec)) {
    j["found"] = false;
    return j;
  }
  j["found"] = true;
  auto file = ReadConfigFile(c.path);
  if (!file.ok()) {
    j["error"] = file.error().Message();
    return j;
  }
  nlohmann::json servers = nlohmann::json::array();
  {
    auto listed = c.format == KnownClient::Format::kToml   ? ListTomlServers(file->text, c.servers_key)
                  : c.format == KnownClient::Format::kYaml ? ListYamlServers(file->text, c.servers_key)
                                                           : ListServers(file->text, c.servers_key, c.project_scopes);
    if (!listed.ok()) {
      j["error"] = listed.error().Message();
      return j;
    }
    for (const auto& e : *listed) servers.push_back({{"name", e.name}, {"kind", e.note}, {"line", e.line}});
  }
  j["servers"] = servers;
  return j;
}

int List(const ClientRequest& req) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& c : Clients()) all.push_back(ListOne(c));
  if (req.json) {
    std::printf("%s\n", all.dump(2).c_str());
    return 0;
  }
  for (const auto& j : all) {
    std::printf("%-15s %-5s %s%s\n", j["client"].get<std::string>().c_str(), j["format"].get<std::string>().c_str(),
                j["path"].get<std::string>().c_str(), j["found"].get<bool>() ? "" : "  (not found)");
    if (j.contains("error")) std::printf("    error: %s\n", Shown(j["error"].get<std::string>()).c_str());
    if (j.contains("note")) std::printf("    note: %s\n", j["note"].get<std::string>().c_str());
    if (!j.contains("servers")) continue;
    for (const auto& s : j["servers"]) {
      std::printf("    %-24s %s\n", Shown(s["name"].get<std::string>()).c_str(), Shown(s["kind"].get<std::string>()).c_str());
    }
  }
  return 0;
}

std::optional<KnownClient> FindClient(const std::string& id) {
  for (const auto& c : Clients()) {
    if (c.id == id) return c;
  }
  return std::nullopt;
}

/// The mcpcell a client should start: this very binary, by absolute path
/// (clients start servers with a PATH of their own, often without /usr/local/bin).
std::string SelfPath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "mcpcell";
}

std::string OriginalsPath(const std::string& config) { return config + ".mcpcell-originals.json"; }

/// The saved original entries of `config` (none when there is no file yet).
Result<std::map<std::string, std::string>> ReadOriginals(const std::string& config) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  if (!fs::exists(OriginalsPath(config), ec) && !fs::is_symlink(OriginalsPath(config), ec)) return out;
  auto f = ReadConfigFile(OriginalsPath(config));
  if (!f.ok()) return f.error();
  auto j = nlohmann::json::parse(f->text, nullptr, false);
  if (!j.is_object() || !j.contains("entries") || !j["entries"].is_object()) {
    return MakeError("read", OriginalsPath(config), "not a file mcpcell wrote ({\"entries\": {...}})");
  }
  for (const auto& [k, v] : j["entries"].items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

/// Saves (or, when none are left, removes) the original entries; the file is owner-only.
Status WriteOriginals(const std::string& config, const std::map<std::string, std::string>& originals) {
  std::string path = OriginalsPath(config);
  std::error_code ec;
  if (originals.empty()) {
    fs::remove(path, ec);
    return {};
  }
  nlohmann::json j{{"comment", "original server entries of " + config + ", for 'mcpcell client unwrap'"},
                   {"entries", originals}};
  std::string text = j.dump(2) + "\n";
  if (!fs::exists(path, ec) && !fs::is_symlink(path, ec)) return WriteNewPrivateFile(path, text);
  auto old = ReadConfigFile(path);
  if (!old.ok()) return old.error();
  return ReplaceConfigFile(*old, text);
}

/// An owner-only copy of the file as it was, next to it, never overwriting one.
Result<std::string> Backup(const ConfigFile& file) {
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  for (int n = 0; n < 100; ++n) {
    std::string path = file.path + ".mcpcell-backup-" + stamp + (n == 0 ? "" : "-" + std::to_string(n));
    auto st = WriteNewPrivateFile(path, file.text);
    if (st.ok()) return path;
    if (st.error().err != EEXIST) return st.error();
  }
  return MakeError("create a backup of", file.path, "100 backups from this second already exist");
}

// The entry's change as a unified-diff-like block, shown in one write.
void ShowDiff(const std::string& path, const EntryChange& e) {
  std::string out = "--- " + Shown(path) + " (server \"" + Shown(e.name) + "\", line " + std::to_string(e.line) +
                    ")\n+++ " + Shown(path) + "\n";
  auto lines = [&out](const std::string& text, char mark) {
    std::size_t pos = 0;
    while (pos <= text.size()) {
      std::size_t eol = text.find('\n', pos);
      std::string line = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
      out += mark + Shown(line) + "\n";
      if (eol == std::string::npos) break;
      pos = eol + 1;
    }
  };
  lines(e.before, '-');
  lines(e.after, '+');
  ShowText(out);
}

void Report(const ConfigEdit& edit, bool wrap) {
  for (const auto& e : edit.entries) {
    std::string what;
    switch (e.kind) {
      case WrapOutcome::Kind::kWrapped: what = "wrapped: " + e.note; break;
      case WrapOutcome::Kind::kAlready: what = "unchanged: " + e.note; break;
      case WrapOutcome::Kind::kRemote: what = "left alone: " + e.note; break;
      case WrapOutcome::Kind::kLeft: what = (wrap ? "left as it is: " : "") + e.note; break;
    }
    SayClient("  " + e.name + ": " + what);
  }
}

/// Checks --policy and returns it as clients must see it: absolute (a client
/// starts mcpcell in a directory of its own choosing) or ~-relative.
Result<std::optional<std::string>> PolicyArg(const std::optional<std::string>& policy) {
  if (!policy) return std::optional<std::string>();
  std::string p = *policy;
  if (p[0] != '/' && p[0] != '~') p = fs::absolute(p).lexically_normal().string();
  std::error_code ec;
  if (!fs::is_regular_file(ExpandHome(p), ec)) {
    return MakeError("--policy", *policy, "no such file: every wrapped server would fail to start");
  }
  // Read as run will read it: a policy run refuses would stop every wrapped server (adv8).
  if (auto loaded = LoadPolicy(ExpandHome(p)); !loaded.ok()) {
    return MakeError("--policy", *policy, loaded.error().Message() + "; every wrapped server would fail to start");
  }
  return std::optional<std::string>(p);
}

Status WriteEdit(const ConfigFile& file, const ConfigEdit& edit) {
  auto backup = Backup(file);
  if (!backup.ok()) return backup.error();
  MCPCELL_TRY(WriteOriginals(file.path, edit.originals));
  MCPCELL_TRY(ReplaceConfigFile(file, edit.text));
  SayClient("wrote " + file.path + " (the previous file is in " + *backup + ")");
  return {};
}

bool IsUtf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

Result<ConfigEdit> Edit(const KnownClient& c, const std::string& text, bool wrap, const WrapOptions& opts,
                        const std::map<std::string, std::string>& originals) {
  const std::string& key = c.servers_key;
  switch (c.format) {
    case KnownClient::Format::kToml:
      return wrap ? WrapTomlConfig(text, key, opts, originals) : UnwrapTomlConfig(text, key, originals);
    case KnownClient::Format::kYaml:
      return wrap ? WrapYamlConfig(text, key, opts, originals) : UnwrapYamlConfig(text, key, originals);
    default:
      return wrap ? WrapConfig(text, key, opts, originals, c.project_scopes)
                  : UnwrapConfig(text, key, originals, c.project_scopes);
  }
}

/// The first uv config file uvx would read that names an index (index-url,
/// extra-index-url, [[index]], find-links): $UV_CONFIG_FILE, the user's
/// ($XDG_CONFIG_HOME or ~/.config)/uv/uv.toml, the system's /etc/uv/uv.toml.
/// "" when none: then a `uvx` entry resolves on the index pip.conf names too.
std::string UvIndexConfig() {
  std::vector<std::string> files;
  if (const char* f = std::getenv("UV_CONFIG_FILE"); f != nullptr && f[0] != '\0') files.emplace_back(f);
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && xdg[0] == '/') files.push_back(std::string(xdg) + "/uv/uv.toml");
  files.push_back(ExpandHome("~/.config/uv/uv.toml"));
  files.emplace_back("/etc/uv/uv.toml");
  for (const auto& f : files) {
    auto text = ReadConfigFile(f);
    if (!text.ok()) continue;
    for (const char* key : {"index", "find-links"}) {
      if (text->text.find(key) != std::string::npos) return f;
    }
  }
  return {};
}

/// The variable names of a VS Code "envFile", read now: the client loads its
/// values into mcpcell, which passes each by name (client/wrap_env.h).
Result<std::vector<std::string>> ReadEnvFileNames(const std::string& path) {
  std::ifstream in(path);
  if (!in) return ErrnoError("read", path);
  std::ostringstream text;
  text << in.rdbuf();
  return EnvFileNames(text.str());
}

Status EditClient(const ClientRequest& req, bool wrap) {
  auto client = FindClient(req.client);
  if (!client) return MakeError("client", req.client, "unknown client; one of: " + Ids());
  std::string path = req.file ? fs::absolute(ExpandHome(*req.file)).string() : client->path;
  auto policy = PolicyArg(req.policy);
  if (!policy.ok()) return policy.error();
  for (const std::string& p : {SelfPath(), policy->value_or("")}) {
    if (!IsUtf8(p)) return MakeError("client wrap", p, "is not UTF-8 text, which a JSON, TOML or YAML file must hold");
  }
  auto file = ReadConfigFile(path);
  if (!file.ok()) return file.error();
  auto originals = ReadOriginals(path);
  if (!originals.ok()) return originals.error();
  auto edit = Edit(*client, file->text, wrap, WrapOptions{SelfPath(), *policy, UvIndexConfig(), true, ReadEnvFileNames}, *originals);
  if (!edit.ok()) return MakeError(edit.error().what, path, edit.error().detail);
  Report(*edit, wrap);
  bool changed = edit->text != file->text;
  if (req.dry_run) {
    for (const auto& e : edit->entries) {
      if (e.changed) ShowDiff(path, e);
    }
    SayClient(changed ? "dry run: nothing written" : "dry run: nothing to change");
    return {};
  }
  if (!changed) {
    SayClient("nothing to change in " + path);
    if (!wrap) MCPCELL_TRY(WriteOriginals(path, edit->originals));
    return {};
  }
  return WriteEdit(*file, *edit);
}

int ClientEdit(const ClientRequest& req, bool wrap) {
  auto st = EditClient(req, wrap);
  if (st.ok()) return 0;
  SayClient(st.error().Message());
  return st.error().what == "client" || st.error().what == "--policy" ? kExitUsage : 1;
}

}  // namespace

void AddClientCommand(CLI::App& app, int* exit_code) {
  auto req = std::make_shared<ClientRequest>();
  auto* client = app.add_subcommand("client", "Find MCP client configs and run their servers through mcpcell");
  client->require_subcommand(1);
  auto* list = client->add_subcommand("list", "List the MCP client configs on this machine and their servers");
  list->add_flag("--json", req->json, "print JSON");
  list->callback([req, exit_code] { *exit_code = List(*req); });
  for (bool wrap : {true, false}) {
    auto* cmd = client->add_subcommand(wrap ? "wrap" : "unwrap",
                                       wrap ? "Rewrite a client's stdio servers to start through mcpcell"
                                            : "Put back the entries 'mcpcell client wrap' rewrote");
    cmd->add_option("client", req->client, "the client: " + Ids())->required();
    cmd->add_option("--file", req->file, "the config file to edit (default: the client's own, see 'client list')");
    if (wrap) cmd->add_option("--policy", req->policy, "run every wrapped server with --policy FILE");
    cmd->add_flag("--dry-run", req->dry_run, "show the change on stderr; write nothing");
    cmd->callback([req, exit_code, wrap] { *exit_code = ClientEdit(*req, wrap); });
  }
}

}  // namespace mcpcell
