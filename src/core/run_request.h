#pragma once
// What the user asked `mcpcell run` for, exactly as given (flags parsed, no
// decisions made). Lowering into a CellSpec happens in cell/spec_builder.

#include <optional>
#include <string>
#include <vector>

namespace mcpcell {

struct RunRequest {
  std::optional<std::string> server;        ///< SERVER: npx://pkg, uvx://pkg, docker://img, registry name
  std::vector<std::string> command;         ///< after `--`: the server command, or extra args for SERVER
  std::optional<std::string> isolate;       ///< --isolate[=auto|native|docker|podman|gvisor]
  std::string idmap = "auto";               ///< --idmap auto|on|off: grants as their owner's (native cells)
  std::string fallback = "none";            ///< --fallback none|native: engine down → refuse or native cell
  std::optional<std::string> policy_file;   ///< --policy FILE
  std::optional<std::string> profile;       ///< --permission-profile NAME|FILE
  std::optional<std::string> audit_log;     ///< --audit-log FILE
  std::vector<std::string> read;            ///< --read PATH or HOST:CELL (read-only bind)
  std::vector<std::string> write;           ///< --write PATH or HOST:CELL (read-write bind)
  std::vector<std::string> env;             ///< --env NAME (copy from host) or NAME=VALUE
  std::vector<std::string> drop_env;        ///< --drop-env NAME: dropped on purpose, no note (cell/env_notice.h)
  std::vector<std::string> secrets;         ///< --secret NAME=FILE
  std::vector<std::string> secret_env;      ///< --secret-env NAME[=VAR]
  std::vector<std::string> allow_host;      ///< --allow-host
  std::vector<std::string> allow_port;      ///< --allow-port
  std::vector<std::string> resolve;         ///< --resolve HOST:PORT:ADDRESS (pin a name for the egress proxy)
  std::optional<std::string> memory;        ///< --memory 512m
  std::optional<std::string> pids;          ///< --pids 128
  std::optional<std::string> cpus;          ///< --cpus 1.5
  std::optional<std::string> tmp_size;      ///< --tmp-size 64m
  std::optional<std::string> timeout;       ///< --timeout 30s
  std::optional<std::string> grace;         ///< --grace 2s (SIGTERM → SIGKILL)
  std::optional<std::string> install_timeout;  ///< --install-timeout 5m (each npm command of an npx:// install)
  std::optional<std::string> install_scripts;  ///< --install-scripts cell|skip (npx:// only; default cell)
  std::vector<std::string> npm_scopes;         ///< --npm-scope @corp: its registry serves other registries' packages too
  std::optional<unsigned> uid;              ///< --uid inside the cell
  std::optional<unsigned> gid;              ///< --gid inside the cell
  std::vector<std::string> system_mounts;   ///< --system-mount PATH (extra read-only system dirs)
  bool no_auto_mount = false;               ///< --no-auto-mount: don't bind the server's own dir
  bool force_credentials = false;           ///< --force-credentials: allow naming ~/.ssh etc.
  std::string relay;                        ///< --relay on|off ("": on for native cells)
  std::optional<std::string> max_message;   ///< --max-message 64m: the relay's per-line limit
  std::optional<std::string> call_rate;     ///< --call-rate 10/s: the relay's token bucket for calls
  std::optional<std::string> max_inflight;  ///< --max-inflight 8: unanswered calls at once
  std::optional<std::string> call_timeout;  ///< --call-timeout 30s: a call unanswered this long is cancelled
  bool audit_content = false;               ///< --audit-content: arguments and results in the audit log, not redacted
  bool dry_run = false;                     ///< --dry-run: print decision + CellSpec, run nothing
  bool verbose = false;                     ///< -v: say what the cell is built from, on stderr
};

}  // namespace mcpcell
