// mcpcell: run MCP servers inside isolation cells decided by a policy.
// stdout belongs to JSON-RPC: everything mcpcell says goes to stderr.

#include <CLI/CLI.hpp>
#include <fcntl.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"

// A launcher that closed fd 0, 1 or 2 would otherwise hand the next file we
// open that number: the audit log would take the server's JSON-RPC output,
// a cell's sync socket would pass for its stdin. /dev/null stands in, as it
// does for systemd's StandardInput=null (and a closed stdin reads as EOF).
void OccupyStdio() {
  for (int n = 0; n < 3; ++n) {
    if (::fcntl(n, F_GETFD) >= 0 || errno != EBADF) continue;
    int fd = ::open("/dev/null", O_RDWR);  // lowest free number: n itself
    if (fd >= 0 && fd != n) ::close(fd);
  }
}

int main(int argc, char** argv) {
  OccupyStdio();
  CLI::App app{"mcpcell — run MCP servers in isolation cells decided by a policy", "mcpcell"};
  app.set_version_flag("--version", MCPCELL_VERSION);
  app.require_subcommand(1);
  // Everything after the first "--" is the server's command line, verbatim:
  // split it off so CLI11 never interprets a server's own flags.
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> after_dashes;
  auto dashes = std::find(args.begin(), args.end(), "--");
  if (dashes != args.end()) {
    after_dashes.assign(dashes + 1, args.end());
    args.erase(dashes, args.end());
  }
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
  int exit_code = 0;
  mcpcell::AddRunCommand(app, &exit_code, &after_dashes);
  mcpcell::AddDoctorCommand(app, &exit_code);
  mcpcell::AddPolicyCommand(app, &exit_code, &after_dashes);
  mcpcell::AddRegistryCommand(app, &exit_code);
  mcpcell::AddGcCommand(app, &exit_code);
  mcpcell::AddAuditCommand(app, &exit_code);
  mcpcell::AddEgressProxyCommand(app, &exit_code);
  try {
    app.parse(args);
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
