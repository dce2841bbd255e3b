// Placeholder until the policy/registry work lands (issue 3); replaced wholesale.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace mcpcell {

void AddPolicyCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("policy", "(not yet available)");
  cmd->callback([exit_code] {
    std::fputs("mcpcell policy: not implemented yet\n", stderr);
    *exit_code = 2;
  });
}

}  // namespace mcpcell
