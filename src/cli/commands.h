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

/// Which of run's options a command takes: all of them (run), or those that
/// decide the plan (policy explain: no --dry-run, no --audit-log — it runs nothing).
enum class RunOptionSet { kRun, kPlan };

/// Registers run's SERVER positional and options, writing into *req, so
/// `policy explain` takes exactly what `run` takes.
void AddRunOptions(CLI::App* cmd, RunRequest* req, RunOptionSet set);

/// `after_dashes` holds everything after the first `--` on the command line
/// (the server command), split off before CLI11 sees argv.
void AddRunCommand(CLI::App& app, int* exit_code, const std::vector<std::string>* after_dashes);
void AddDoctorCommand(CLI::App& app, int* exit_code);
void AddPolicyCommand(CLI::App& app, int* exit_code, const std::vector<std::string>* after_dashes);
void AddRegistryCommand(CLI::App& app, int* exit_code);
void AddGcCommand(CLI::App& app, int* exit_code);
void AddEgressProxyCommand(CLI::App& app, int* exit_code);
void AddAuditCommand(CLI::App& app, int* exit_code);
void AddPinsCommand(CLI::App& app, int* exit_code);
void AddInstallCommand(CLI::App& app, int* exit_code);
void AddClientCommand(CLI::App& app, int* exit_code);

}  // namespace mcpcell
