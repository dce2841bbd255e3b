#pragma once
// Each subcommand lives in its own file and registers itself on the app.
// The callback stores the command's exit status in *exit_code.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace mcpcell {

struct RunRequest;

/// The words of a server command line, split off argv before CLI11 sees it.
/// The rule (README "Server arguments"): with a `--` on the line, everything
/// after the first `--` is the server's, and the words before it are
/// mcpcell's options and SERVER in any order (the seed's spelling). With no
/// `--`, the first word that is not an option of mcpcell is SERVER and every
/// word after it is the server's, verbatim, flags included (like
/// `docker run IMAGE ARGS`).
struct CommandTail {
  bool separated = false;          ///< argv had a `--`
  std::vector<std::string> words;  ///< everything after the first `--`
};

/// Which of run's options a command takes: all of them (run), or those that
/// decide the plan (policy explain: no --dry-run, no --audit-log — it runs nothing).
enum class RunOptionSet { kRun, kPlan };

/// Registers run's SERVER and ARGS positionals and options, writing into
/// *req, so `policy explain` takes exactly what `run` takes. Without a `--`
/// on the line, CLI11 stops reading options at SERVER (positionals_at_end).
void AddRunOptions(CLI::App* cmd, RunRequest* req, RunOptionSet set, const CommandTail& tail);

/// Puts the server's words into req->command after CLI11 parsed `cmd`:
/// `tail`'s words when the line had a `--`, else those CLI11 took after
/// SERVER. Refuses words between SERVER and a `--` that are not options, and
/// notes on stderr a word after SERVER that spells an option of mcpcell
/// (it goes to the server, as the rule says). False after saying why.
bool TakeServerWords(const CLI::App& cmd, const CommandTail& tail, RunRequest* req);

void AddRunCommand(CLI::App& app, int* exit_code, const CommandTail* tail);
void AddDoctorCommand(CLI::App& app, int* exit_code);
void AddPolicyCommand(CLI::App& app, int* exit_code, const CommandTail* tail);
void AddRegistryCommand(CLI::App& app, int* exit_code);
void AddGcCommand(CLI::App& app, int* exit_code);
void AddPsCommand(CLI::App& app, int* exit_code);
void AddCacheCommand(CLI::App& app, int* exit_code);
void AddEgressProxyCommand(CLI::App& app, int* exit_code);
void AddAuditCommand(CLI::App& app, int* exit_code);
void AddPinsCommand(CLI::App& app, int* exit_code);
void AddInstallCommand(CLI::App& app, int* exit_code);
void AddClientCommand(CLI::App& app, int* exit_code);

}  // namespace mcpcell
