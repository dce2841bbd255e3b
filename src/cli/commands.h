#pragma once
// Each subcommand lives in its own file and registers itself on the app.
// The callback stores the command's exit status in *exit_code.

namespace CLI {
class App;
}

namespace mcpcell {

void AddRunCommand(CLI::App& app, int* exit_code);
void AddDoctorCommand(CLI::App& app, int* exit_code);
void AddPolicyCommand(CLI::App& app, int* exit_code);
void AddRegistryCommand(CLI::App& app, int* exit_code);

}  // namespace mcpcell
