// `mcpcell run`: decide, build the cell, run the server in it.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "cell/backend.h"
#include "cell/env_notice.h"
#include "cell/launch_prefetch.h"
#include "cell/spec_builder.h"
#include "cli/audit_events.h"
#include "cli/cell_events.h"
#include "cli/commands.h"
#include "cli/launch_plan.h"
#include "core/exit_codes.h"
#include "core/run_request.h"
#include "cli/tracked_run.h"
#include "util/diag.h"
#include "util/json_text.h"
#include "util/path_search.h"
#include "util/home_path.h"
#include "util/phase_trace.h"
#include "util/process_environment.h"

namespace mcpcell {
namespace {

// The policy's reason starts "ORIGIN rule N (deny): "; the deny line already
// names the rule once.
std::string WithoutRulePrefix(const std::string& reason, const std::string& rule) {
  std::string prefix = rule + " (deny): ";
  return reason.rfind(prefix, 0) == 0 ? reason.substr(prefix.size()) : reason;
}

// CLI11 2.1 has no App::usage(): the usage line comes from the formatter.
class RunFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App*, std::string) const override {
    return "\nUsage: mcpcell run [OPTIONS] SERVER [ARGS...]\n"
           "       mcpcell run [OPTIONS] SERVER [OPTIONS] -- [ARGS...]\n"
           "       mcpcell run --isolate[=LEVEL] [OPTIONS] -- COMMAND [ARGS...]\n"
           "Without --, every word after SERVER is the server's, verbatim (flags included), as in docker run.\n"
           "With --, everything after the first -- is the server's (SERVER's arguments, or the command).\n";
  }
};

constexpr const char* kRunFooter = R"(Examples:
  mcpcell run --isolate -- node ./server.js
  mcpcell run --isolate --read ~/notes --write ~/notes/out -- python3 server.py
  mcpcell run filesystem ~/projects/site             (a registry name; see 'mcpcell registry list')
  mcpcell run --read ~/site filesystem ~/site --flag  (--flag is the server's: it follows SERVER)
  mcpcell run filesystem --read ~/site -- ~/site      (the same with --: options may follow SERVER)
  mcpcell run --isolate=docker docker://mcp/fetch@sha256:...
  mcpcell run --isolate --dry-run -- node ./server.js   (print what would be enforced; run nothing)

Paths: a leading ~ or ~/ in --read, --write, --audit-log, --policy,
  --permission-profile, --secret FILE and --system-mount is the caller's home
  ($HOME), expanded by mcpcell itself because MCP clients do not run a shell;
  ~user is not expanded.

Exit codes: the server's own status (128+N when killed by signal N), or
  2 bad input, 122 isolation unavailable, 123 denied by policy, 124 timeout,
  125 cell setup failed, 126 not executable, 127 not found in the cell.
)";

// A value of --isolate that is no level is the SERVER it swallowed
// (`--isolate npx://pkg`); NormalizeRequest refuses anything else.
bool IsolateValueIsServer(const std::string& value) {
  for (const char* level : {"", "auto", "native", "container", "docker", "podman", "gvisor"}) {
    if (value == level) return false;
  }
  return true;
}

// Runs the server with no cell, because a policy rule said so. Replaces mcpcell.
int RunPlainly(const CellSpec& spec, const std::string& judged_exe) {
  if (spec.argv.empty()) {  // a plan that names no program (PlanLaunch refuses one for images)
    Say("cannot run without a cell: the plan names no program");
    return kExitNotFound;
  }
  // The spec's HOME is the cell's (/home/mcp): on the host that is another
  // account's home, whose usercustomize.py, .gitconfig or .npmrc the server
  // would load (adv11). Without a cell the server runs as the caller, in the
  // caller's home — the account's, not mcpcell's $HOME, which a client's env
  // block sets (adv13: that HOME's user-site .pth ran before the trusted
  // script); `--env HOME` is refused on such a run.
  auto env = spec.env;
  env.erase("HOME");
  if (std::string home = AccountHome(); !home.empty()) env["HOME"] = home;
  std::vector<std::string> envs;
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::vector<std::string> args = spec.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  // The file the policy judged (LaunchPlan::plain_exe: its real path), not a
  // second search by execvpe, which could pick another one; argv as written.
  std::string exe = !judged_exe.empty()                         ? judged_exe
                    : spec.argv[0].find('/') != std::string::npos ? spec.argv[0]
                                                                  : FindOnHostPath(spec.argv[0]);
  if (exe.empty()) {
    Say("cannot run " + spec.argv[0] + ": not found on PATH");
    return kExitNotFound;
  }
  ::signal(SIGPIPE, SIG_DFL);  // ignored by mcpcell (main.cc); the server gets the default, as without it
  ::execve(exe.c_str(), argv.data(), envp.data());
  int err = errno;
  ::signal(SIGPIPE, SIG_IGN);
  Say("cannot run " + exe + ": " + std::strerror(err));
  return err == ENOENT ? kExitNotFound : kExitCannotExec;
}

// -v: one line per thing the cell is built from, so a user can check it
// without reading the --dry-run JSON.
void DescribeCell(const CellSpec& spec) {
  Say("cell: backend " + spec.backend + ", user " + std::to_string(spec.uid) + ":" + std::to_string(spec.gid) +
      ", network " + ToString(spec.network.mode) + ", workdir " + spec.workdir);
  for (const auto& m : spec.mounts) {
    std::string what = m.kind == MountSpec::Kind::kTmpfs ? "tmpfs" : m.source;
    Say("  " + std::string(m.writable ? "rw " : "ro ") + m.target + " <- " + what + " (" + m.why +
        (m.optional ? ", if present" : "") + ")");
  }
  auto limit = [](const auto& l, const std::string& unit) {
    return l.value ? std::to_string(*l.value) + unit + (l.requested ? "" : " (default)") : std::string("none");
  };
  Say("  limits: memory " + limit(spec.limits.memory_bytes, " bytes") + ", pids " + limit(spec.limits.pids, "") +
      ", cpus " + limit(spec.limits.cpus, "") + ", /tmp " + std::to_string(spec.limits.tmp_bytes) + " bytes");
  for (const auto& sec : spec.secrets) Say("  secret /run/secrets/" + sec.name + " <- " + sec.host_file);
  const NetworkSpec& net = spec.network;
  if (net.mode == NetworkSpec::Mode::kAllowList) {
    std::string rules = net.allow_all ? std::string("every host and port (audit-only)") : "hosts [";
    if (!net.allow_all) {
      for (std::size_t i = 0; i < net.allow_hosts.size(); ++i) rules += (i ? ", " : "") + net.allow_hosts[i];
      rules += "] ports [";
      for (std::size_t i = 0; i < net.allow_ports.size(); ++i) rules += (i ? ", " : "") + std::to_string(net.allow_ports[i]);
      rules += net.allow_ports.empty() ? "any]" : "]";
    }
    Say("  egress: " + rules + " via mcpcell's proxy at 127.0.0.1:3128 and DNS stub at 127.0.0.53");
    for (const auto& pin : net.resolve) {
      Say("  resolve " + pin.host + ":" + (pin.port == 0 ? std::string("*") : std::to_string(pin.port)) + " -> " +
          pin.address);
    }
  }
}

// What --dry-run prints: exactly what the run would do. Only an isolated
// server has a cell; an allowed one runs as the caller with nothing enforced,
// a denied one not at all. The backend is the one the level selects.
nlohmann::json DryRunJson(const LaunchPlan& plan) {
  nlohmann::json out{{"decision", plan.explain}, {"cell", nullptr}};
  switch (plan.action) {
    case LaunchPlan::Action::kDeny:
      out["runs"] = "nothing: denied by " + plan.rule;
      break;
    case LaunchPlan::Action::kAllow:
      out["runs"] = "WITHOUT a cell, as the caller (allowed by " + plan.rule + "): nothing below the decision is enforced";
      out["argv"] = plan.spec.argv;
      break;
    case LaunchPlan::Action::kIsolate:
      out["cell"] = ToJson(plan.spec);
      out["cell"]["backend"] = BackendName(plan.Target());
      break;
  }
  return out;
}

// --drop-env NAME next to --env NAME[=VALUE] asks for two opposite things.
Status CheckDropEnv(const RunRequest& req) {
  for (const auto& name : req.drop_env) {
    for (const auto& e : req.env) {
      if (e.substr(0, e.find('=')) == name) {
        return MakeError("--drop-env", name, "is also passed with --env " + e.substr(0, e.find('=')) + "; keep one");
      }
    }
  }
  return {};
}

// Once per run, before the server starts: the variables a client set for the
// server that the clean environment drops (cell/env_notice.h). Names only.
void NoteUnpassedCredentials(const LaunchPlan& plan, const RunRequest& req) {
  if (plan.action == LaunchPlan::Action::kDeny) return;
  auto names = UnpassedCredentials(ProcessEnvironment(), plan.spec.env, plan.spec.secrets, req.drop_env);
  if (!names.empty()) Say(UnpassedCredentialsNote(names));
}

int Run(RunRequest req) {
  TracePhase("cli-parsed");
  Status checked = NormalizeRequest(&req);
  if (checked) checked = CheckDropEnv(req);
  if (!checked) {
    Say(checked.error().Message());
    return kExitUsage;
  }
  // The launch's plan-independent work (the seccomp program, root's uid claim
  // facts) overlaps with planning on a thread of its own (cell/launch_prefetch.h).
  if (!req.dry_run) StartLaunchPrefetch();
  auto plan = PlanLaunch(req);
  if (!plan) {
    Say(plan.error().Message());
    return ExitCodeFor(plan.error());
  }
  TracePhase("planned");
  // Listed by `mcpcell ps`, stderr copied to a log: an isolated run only.
  std::unique_ptr<TrackedRun> tracked;
  if (!req.dry_run && plan->action == LaunchPlan::Action::kIsolate) tracked = TrackedRun::Start(*plan);
  TracePhase("tracked-run");
  NoteUnpassedCredentials(*plan, req);
  // The audit log is opened before anything happens, so a run that cannot
  // be recorded does not happen at all.
  std::optional<AuditLog> audit;
  if (req.audit_log && !req.dry_run) {
    auto opened = AuditLog::Open(*req.audit_log);
    if (!opened) {
      Say("--audit-log: " + opened.error().Message());
      return kExitUsage;
    }
    audit.emplace(std::move(*opened));
  }
  auto record = [&audit](const nlohmann::json& event) {
    if (!audit) return;
    if (auto ok = audit->Write(event); !ok) Warn("audit log: " + ok.error().Message());
  };
  if (req.dry_run) {
    std::printf("%s\n", JsonText(DryRunJson(*plan), 2).c_str());
    return 0;
  }
  record(DecisionEvent(*plan));
  switch (plan->action) {
    case LaunchPlan::Action::kDeny:
      // Every denial says how to allow it (the relay's tool denials do too).
      Say("denied by " + plan->rule + ": " + WithoutRulePrefix(plan->reason, plan->rule) +
          "; to allow it, add a rule before that one that isolates this server (\"action\": \"isolate\"), "
          "or change the rule (`mcpcell policy explain` shows how the policy decides)");
      return kExitDenied;
    case LaunchPlan::Action::kAllow:
      Say("running WITHOUT a cell, allowed by " + plan->rule + ": " + plan->reason);
      // The server replaces this process: nothing is left to record its
      // launch, exit or calls (adv13: accepted without a word).
      if (audit) {
        Say("note: --audit-log records only this decision: a run without a cell has no relay to audit its calls, and "
            "the server replaces mcpcell (no launch or exit record)");
      }
      return RunPlainly(plan->spec, plan->plain_exe);
    case LaunchPlan::Action::kIsolate:
      break;
  }
  RunContext ctx{plan->server, audit ? &*audit : nullptr};
  auto fallback = ParseFallback(req.fallback);
  if (!fallback) {
    Say(fallback.error().Message());
    return kExitUsage;
  }
  // A docker:// image completes its spec from the image in the container
  // cell (src/cell/docker/README.md): what -v would list is not known yet.
  if (req.verbose && !plan->image) DescribeCell(plan->spec);
  TracePhase("audit-opened");
  // The launch record masks secrets in the server's argv with the built-in
  // rules, whose database costs ~3 ms of CPU to load (bench/RESULTS.md,
  // fourth pass): made only when there is an audit log to write it to.
  LaunchCallback on_launch = audit ? RecordLaunch(*plan, record) : LaunchCallback();
  CellResult r = RunCell(plan->Target(), plan->spec, ctx, on_launch, *fallback);
  return FinishRun(*plan, r, record);
}

}  // namespace

void AddRunOptions(CLI::App* cmd, RunRequest* req, RunOptionSet set, const CommandTail& tail) {
  cmd->add_option("server", req->server, "npx://pkg[@ver], uvx://pkg, docker://image, or a registry name");
  cmd->add_option("args", req->command, "the server's arguments, verbatim (flags included) when no -- is on the line");
  // CLI11 2.1 (App::_parse_single): once a positional is read, every later
  // word is a positional too. That is the "no --" rule of commands.h.
  cmd->positionals_at_end(!tail.separated);
  cmd->add_option("--isolate", req->isolate, "isolate the server: auto (default), native, container, docker, podman, gvisor")
      ->expected(0, 1)
      ->type_name("[=LEVEL]");
  cmd->add_option("--fallback", req->fallback, "when the level's engine is down: none (refuse, default) or native");
  cmd->add_option("--policy", req->policy_file, "policy file deciding isolate / deny / allow");
  cmd->add_option("--permission-profile", req->profile, "ToolHive permission profile: none, network, or a FILE");
  if (set == RunOptionSet::kRun) {
    cmd->add_option("--audit-log", req->audit_log, "append JSON-lines audit events to FILE (created 0600)");
  }
  cmd->add_option("--read", req->read, "make PATH (or HOST:CELL) readable in the cell")->type_name("PATH");
  cmd->add_option("--write", req->write, "make PATH (or HOST:CELL) writable in the cell")->type_name("PATH");
  cmd->add_option("--idmap", req->idmap,
                  "native cells run by root: --read/--write dirs act as their owner's: auto (default: where the "
                  "kernel and the dir allow, else said), on (refuse otherwise), off");
  cmd->add_option("--env", req->env, "pass NAME from the environment, or set NAME=VALUE")->type_name("NAME[=VALUE]");
  if (set == RunOptionSet::kRun) {
    cmd->add_option("--drop-env", req->drop_env, "NAME from the environment is dropped on purpose: no note about it")
        ->type_name("NAME");
  }
  cmd->add_option("--secret", req->secrets, "secret file, readable in the cell at /run/secrets/NAME")->type_name("NAME=FILE");
  cmd->add_option("--secret-env", req->secret_env, "also expose secret NAME as an env var (only when asked)")->type_name("NAME[=VAR]");
  cmd->add_option("--allow-host", req->allow_host, "allow outbound connections to HOST (.domain for subdomains)");
  cmd->add_option("--allow-port", req->allow_port, "allow outbound connections to PORT");
  cmd->add_option("--resolve", req->resolve, "pin HOST on PORT (* = any) to ADDRESS for the egress proxy, like curl's")
      ->type_name("HOST:PORT:ADDRESS");
  cmd->add_option("--memory", req->memory, "memory limit, e.g. 512m (default 1g)");
  cmd->add_option("--pids", req->pids, "process/thread limit (default 512)");
  cmd->add_option("--cpus", req->cpus, "CPU limit in cores, e.g. 0.5");
  cmd->add_option("--tmp-size", req->tmp_size, "size of the cell's /tmp (default 128m)");
  cmd->add_option("--timeout", req->timeout, "stop the server after this long, e.g. 30s, 5m (exit 124)");
  cmd->add_option("--grace", req->grace, "time between stdin close / SIGTERM and SIGKILL (default 2s)");
  cmd->add_option("--install-timeout", req->install_timeout,
                  "stop an npx:// package install (each npm command, each package's install-script cell) "
                  "after this long (default 5m)");
  cmd->add_option("--install-scripts", req->install_scripts,
                  "npx:// packages' install scripts (native modules): cell (default) runs them in a native cell of "
                  "their own that can write only that package's directory and reach only the npm registries they came "
                  "from; skip does not run them")
      ->check(CLI::IsMember({"cell", "skip"}));
  cmd->add_option("--npm-scope", req->npm_scopes,
                  "let packages of SCOPE (@name) come from the registry your npm config names for it, with your "
                  "credentials there, when a package of another registry depends on them (npx:// only; by default "
                  "they are looked up on the installed package's own registry)")
      ->type_name("SCOPE");
  cmd->add_option("--uid", req->uid, "uid inside the cell (default 1000)");
  cmd->add_option("--gid", req->gid, "gid inside the cell (default: the uid)");
  cmd->add_option("--system-mount", req->system_mounts, "extra read-only host directory at the same path");
  cmd->add_flag("--no-auto-mount", req->no_auto_mount, "do not mount the server's own directory automatically");
  cmd->add_flag("--force-credentials", req->force_credentials, "allow naming credential locations (~/.ssh, ...)");
  cmd->add_option("--relay", req->relay, "on (the default, every cell): read every MCP message, enforce tool rules, "
                  "audit calls, pass plain-text lines as they are; off: copy bytes (refused with tool rules)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--max-message", req->max_message, "largest MCP message the relay passes, e.g. 64m (default); a message whose parse would take over 4x this is refused too");
  cmd->add_option("--call-rate", req->call_rate, "most tool calls (and resource reads, prompt gets) per s/m/h, e.g. 10/s");
  cmd->add_option("--max-inflight", req->max_inflight, "most unanswered tool calls at once, e.g. 8");
  cmd->add_flag("--audit-content", req->audit_content, "put calls' arguments and results in the --audit-log as they "
                "are (default: redacted to key names, kinds, sizes and SHA-256)");
  cmd->add_option("--call-timeout", req->call_timeout, "answer a call the server has not answered in this long with an "
                  "error and cancel it, e.g. 30s");
  if (set == RunOptionSet::kRun) {
    cmd->add_flag("--dry-run", req->dry_run, "print the decision and the CellSpec as JSON; run nothing");
  }
  cmd->add_flag("-v,--verbose", req->verbose, "say on stderr what the cell is built from");
  // A repeatable option takes one value per use, so `--allow-host x SERVER`
  // leaves SERVER to the positional instead of swallowing it as a second host.
  for (CLI::Option* opt : cmd->get_options()) {
    if (opt->get_positional() == false) opt->allow_extra_args(false);
  }
}

bool TakeServerWords(const CLI::App& cmd, const CommandTail& tail, RunRequest* req) {
  if (tail.separated) {
    if (!req->command.empty()) {
      Say("'" + req->command.front() + "' follows SERVER, and a -- comes later: with a -- on the line, the words "
          "before it are mcpcell's options and SERVER, and the server's arguments go after it (mcpcell run [OPTIONS] "
          "SERVER -- ARGS...); or leave out the -- to give the server every word after SERVER");
      return false;
    }
    req->command = tail.words;
    return true;
  }
  if (req->server && req->isolate && IsolateValueIsServer(*req->isolate)) {
    // `--isolate SERVER ARGS`: the optional level took SERVER, so the word
    // CLI11 read as SERVER is the server's first argument.
    req->command.insert(req->command.begin(), *req->server);
    req->server = std::exchange(*req->isolate, "auto");
  }
  for (const auto& word : req->command) {
    std::string name = word.substr(0, word.find('='));
    if (name.size() < 2 || name[0] != '-' || cmd.get_option_no_throw(name) == nullptr) continue;
    Say("note: '" + name + "' comes after SERVER, so it goes to the server, not to mcpcell (no -- on the line); "
        "for mcpcell, put it before SERVER");
    break;
  }
  return true;
}

void AddRunCommand(CLI::App& app, int* exit_code, const CommandTail* tail) {
  auto req = std::make_shared<RunRequest>();
  auto* cmd = app.add_subcommand("run", "Run an MCP server in an isolation cell (its stdio is the client's)");
  cmd->formatter(std::make_shared<RunFormatter>());
  cmd->footer(kRunFooter);
  AddRunOptions(cmd, req.get(), RunOptionSet::kRun, *tail);
  cmd->callback([cmd, req, exit_code, tail] {
    *exit_code = TakeServerWords(*cmd, *tail, req.get()) ? Run(*req) : kExitUsage;
  });
}

}  // namespace mcpcell
