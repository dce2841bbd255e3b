// mcpcell: run MCP servers inside isolation cells decided by a policy.
// stdout belongs to JSON-RPC: everything mcpcell says goes to stderr.

#include <CLI/CLI.hpp>
#include <fcntl.h>

#include <algorithm>
#include <csignal>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/exit_codes.h"
#include "util/diag.h"
#include "util/nearest.h"
#include "util/phase_trace.h"

namespace {

std::vector<std::string> SubcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  auto near = mcpcell::Nearest(word, candidates);
  if (near.empty()) return {};
  std::string out = "; did you mean '" + near[0] + "'";
  for (std::size_t i = 1; i < near.size(); ++i) out += " or '" + near[i] + "'";
  return out + "?";
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
  return out;
}

// CLI11 reports "A subcommand is required" or "arguments were not expected"
// without saying which word it did not know. Walks the words as given
// (before "--") and names the first unknown command or option, with the
// nearest valid one; "" when every word is known (CLI11's message stands).
std::string UnknownWord(CLI::App& app, const std::vector<std::string>& given) {
  CLI::App* at = &app;
  std::string path = "mcpcell";
  for (const auto& word : given) {
    if (word.empty() || word[0] != '-') {
      auto subs = SubcommandNames(*at);
      // SERVER: with positionals_at_end, every word after it is the server's.
      if (subs.empty() && at->get_positionals_at_end()) break;
      if (subs.empty()) continue;  // a positional
      if (std::find(subs.begin(), subs.end(), word) == subs.end()) {
        std::vector<std::string> options = OptionNames(*at);
        std::vector<std::string> dashed;
        for (const auto& o : options) dashed.push_back(o.substr(o.find_first_not_of('-')));
        std::string hint = DidYouMean(word, subs);
        if (hint.empty()) {
          auto near = mcpcell::Nearest(word, dashed, 1);
          if (!near.empty()) hint = "; did you mean '--" + near[0] + "'?";
        }
        return "unknown command '" + word + "' for '" + path + "'" + hint + " (commands: " + Joined(subs) + ")";
      }
      at = at->get_subcommand(word);
      path += " " + word;
      continue;
    }
    std::string name = word.substr(0, word.find('='));
    if (name == "--help" || name == "-h") continue;
    bool known = at->get_option_no_throw(name) != nullptr || app.get_option_no_throw(name) != nullptr;
    if (!known) return "unknown option '" + name + "' for '" + path + "'" + DidYouMean(name, OptionNames(*at));
  }
  auto subs = SubcommandNames(*at);
  if (at->get_require_subcommand_min() > 0 && at->get_subcommands().empty() && !subs.empty()) {
    return "'" + path + "' needs a command: " + Joined(subs);
  }
  return {};
}

}  // namespace

// A launcher that closed fd 0, 1 or 2 would otherwise hand the next file we
// open that number: the audit log would take the server's JSON-RPC output,
// a cell's sync socket would pass for its stdin. /dev/null stands in, as it
// does for systemd's StandardInput=null (and a closed stdin reads as EOF).
namespace {

// Every command but `run`, in the order `mcpcell --help` lists them.
void AddOtherCommands(CLI::App& app, int* exit_code, const mcpcell::CommandTail* tail) {
  mcpcell::AddDoctorCommand(app, exit_code);
  mcpcell::AddPolicyCommand(app, exit_code, tail);
  mcpcell::AddRegistryCommand(app, exit_code);
  mcpcell::AddGcCommand(app, exit_code);
  mcpcell::AddPsCommand(app, exit_code);
  mcpcell::AddCacheCommand(app, exit_code);
  mcpcell::AddAuditCommand(app, exit_code);
  mcpcell::AddPinsCommand(app, exit_code);
  mcpcell::AddInstallCommand(app, exit_code);
  mcpcell::AddClientCommand(app, exit_code);
  mcpcell::AddEgressProxyCommand(app, exit_code);
}

}  // namespace

void OccupyStdio() {
  for (int n = 0; n < 3; ++n) {
    if (::fcntl(n, F_GETFD) >= 0 || errno != EBADF) continue;
    int fd = ::open("/dev/null", O_RDWR);  // lowest free number: n itself
    if (fd >= 0 && fd != n) ::close(fd);
  }
}

int main(int argc, char** argv) {
  mcpcell::TracePhase("main");
  OccupyStdio();
  // A client's stderr (or stdout) that is a closed pipe is EPIPE for each
  // write, never a SIGPIPE that ends mcpcell before its server runs
  // (adv19). Every program mcpcell starts gets SIG_DFL back before its
  // execve (run_cmd.cc's plain run, host_run.cc's tools, cell_init.cc).
  ::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"mcpcell — run MCP servers in isolation cells decided by a policy", "mcpcell"};
  app.set_version_flag("--version", MCPCELL_VERSION);
  app.require_subcommand(1);
  // Everything after the first "--" is the server's command line, verbatim:
  // split it off so CLI11 never interprets a server's own flags. Without a
  // "--", run and policy explain stop reading options at SERVER (commands.h).
  std::vector<std::string> args(argv + 1, argv + argc);
  mcpcell::CommandTail tail;
  auto dashes = std::find(args.begin(), args.end(), "--");
  if (dashes != args.end()) {
    tail.separated = true;
    tail.words.assign(dashes + 1, args.end());
    args.erase(dashes, args.end());
  }
  const std::vector<std::string> given = args;
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
  int exit_code = 0;
  mcpcell::AddRunCommand(app, &exit_code, &tail);
  // A launch (what a client starts a dozen times when it opens) builds only
  // `run`: the other commands' options cost 0.23 ms of CPU per launch
  // (bench/RESULTS.md, fourth pass). Inside `run` no sibling is recognized
  // anyway (require_subcommand(1): CLI11's _valid_subcommand stops at the
  // parent's maximum), and run's help and errors name run's options only.
  // Any other first word builds them all, for help, suggestions and errors.
  if (given.empty() || given.front() != "run") AddOtherCommands(app, &exit_code, &tail);
  mcpcell::TracePhase("cli-built");
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    // Help goes to stderr too: a client may have started us by mistake.
    mcpcell::ShowText(app.help());
    return 0;
  } catch (const CLI::CallForAllHelp& e) {
    mcpcell::ShowText(app.help("", CLI::AppFormatMode::All));
    return 0;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --version
      mcpcell::ShowText(std::string(e.what()) + "\n");
      return 0;
    }
    std::string unknown = UnknownWord(app, given);
    mcpcell::Say(unknown.empty() ? e.what() : unknown);
    mcpcell::ShowText("Run 'mcpcell --help' or 'mcpcell <command> --help' for usage.\n");
    return mcpcell::kExitUsage;
  }
  mcpcell::TracePhase("exit");
  return exit_code;
}
