// mcpcell: run MCP servers inside isolation cells decided by a policy.
// stdout belongs to JSON-RPC: everything mcpcell says goes to stderr.

#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/commands.h"
#include "cli/exit_codes.h"

int main(int argc, char** argv) {
  CLI::App app{"mcpcell — run MCP servers in isolation cells decided by a policy", "mcpcell"};
  app.set_version_flag("--version", MCPCELL_VERSION);
  app.require_subcommand(1);
  int exit_code = 0;
  mcpcell::AddRunCommand(app, &exit_code);
  mcpcell::AddDoctorCommand(app, &exit_code);
  mcpcell::AddPolicyCommand(app, &exit_code);
  mcpcell::AddRegistryCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    // Help goes to stderr too: a client may have started us by mistake.
    std::fputs(app.help().c_str(), stderr);
    return 0;
  } catch (const CLI::CallForAllHelp& e) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stderr);
    return 0;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --version
      std::fputs((std::string(e.what()) + "\n").c_str(), stderr);
      return 0;
    }
    std::fprintf(stderr, "mcpcell: %s\n", e.what());
    std::fprintf(stderr, "Run 'mcpcell --help' or 'mcpcell <command> --help' for usage.\n");
    return mcpcell::kExitUsage;
  }
  return exit_code;
}
