// `mcpcell gc`: removes what a dead mcpcell left behind — containers whose
// supervisor is gone (by label, in every reachable engine), secrets
// directories, cgroups, unfinished npx installs and cell id claims (cell_ids.h)
// of dead runs. `mcpcell run` does the same before each cell (and each npx
// install); this command is for when no run follows (cron, after a crash).

#include <CLI/CLI.hpp>

#include <cstdio>

#include "cell/cell_ids.h"
#include "cell/docker/container_net.h"
#include "cell/docker/engine_client.h"
#include "cell/docker/engine_endpoint.h"
#include "cell/docker/reaper.h"
#include "cell/docker/run_dirs.h"
#include "cell/docker/secrets_dir.h"
#include "cell/docker/stdio_fifos.h"
#include "cell/native/cgroup.h"
#include "cli/commands.h"
#include "source/npx_install.h"

namespace mcpcell {
namespace {

int Gc() {
  int failures = 0;
  for (auto engine : {docker::Engine::kDocker, docker::Engine::kPodman}) {
    std::string name = docker::ToString(engine);
    auto sock = docker::EngineSocket(engine);
    if (!sock) {
      std::fprintf(stderr, "mcpcell gc: %s: %s\n", name.c_str(), sock.error().Message().c_str());
      continue;
    }
    auto removed = docker::ReapOrphans(docker::EngineClient(*sock));
    if (!removed) {
      if (docker::IsEngineUnreachable(removed.error())) {
        std::fprintf(stderr, "mcpcell gc: %s: not reachable at %s, nothing to do\n", name.c_str(), sock->c_str());
        continue;
      }
      std::fprintf(stderr, "mcpcell gc: %s: %s\n", name.c_str(), removed.error().Message().c_str());
      ++failures;
      continue;
    }
    for (const auto& c : *removed) std::fprintf(stderr, "mcpcell gc: %s: removed orphaned container %s\n",
                                                name.c_str(), c.c_str());
    std::fprintf(stderr, "mcpcell gc: %s: %zu orphaned container(s) removed\n", name.c_str(), removed->size());
  }
  int dirs = docker::ReapSecretDirs() + docker::ReapStdioDirs() + docker::ReapEgressDirs() + docker::ReapSeccompFiles();
  if (dirs > 0) std::fprintf(stderr, "mcpcell gc: removed %d secrets/stdio/egress directory(ies) and seccomp profile file(s) of dead runs\n", dirs);
  // A supervisor killed before it started its cgroup janitor (during cell
  // setup) leaves its cell's cgroups; the next native run would reap them.
  if (int cgroups = ReapStaleCgroups(); cgroups > 0) {
    std::fprintf(stderr, "mcpcell gc: removed %d cgroup(s) of dead runs\n", cgroups);
  }
  if (auto cache = NpxCacheRoot(); cache.ok()) {
    int installs = RemoveAbandonedInstalls(*cache);
    if (installs > 0) {
      std::fprintf(stderr, "mcpcell gc: removed %d unfinished npx install(s) of dead runs from %s\n", installs,
                   cache->c_str());
    }
  }
  int claims = ReapCellIdClaims(CellIdDirForThisUser());
  if (claims > 0) std::fprintf(stderr, "mcpcell gc: removed %d cell id claim(s) of dead runs\n", claims);
  return failures == 0 ? 0 : 1;
}

}  // namespace

void AddGcCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("gc", "Remove containers and temp files a dead mcpcell left behind");
  cmd->callback([exit_code] { *exit_code = Gc(); });
}

}  // namespace mcpcell
