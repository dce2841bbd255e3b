#include "cell/docker/stdio_fifos.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <utility>

#include "cell/docker/cell_user_access.h"
#include "cell/docker/run_dirs.h"

namespace mcpcell::docker {
namespace {

constexpr const char* kParent = "/dev/shm";
constexpr const char* kPrefix = "mcpcell-stdio-";
// Room for a few large JSON-RPC chunks in flight each way (fcntl(2) F_SETPIPE_SZ;
// capped by /proc/sys/fs/pipe-max-size for unprivileged callers, so best effort).
constexpr int kPipeBytes = 1 << 20;

Result<UniqueFd> MakeFifo(const std::string& path, std::uint32_t uid, std::uint32_t gid) {
  if (::mkfifo(path.c_str(), 0600) != 0) return ErrnoError("create stdio FIFO", path);
  // Read and write for the cell's user: it reads `in`, writes `out` and `ready`.
  MCPCELL_TRY(HandToCellUser(HandoverFor(uid), -1, path, uid, gid, 6, "hand stdio FIFO to the cell's user"));
  // O_RDWR on a FIFO never blocks (fifo(7)); O_NOFOLLOW: it is the node we just made.
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return ErrnoError("open stdio FIFO", path);
  (void)::fcntl(fd.get(), F_SETPIPE_SZ, kPipeBytes);
  return fd;
}

}  // namespace

Result<StdioFifos> StdioFifos::Create(std::uint32_t uid, std::uint32_t gid) {
  StdioFifos f;
  auto outer = RunDir::Create(kParent, kPrefix, "stdio FIFO directory");
  if (!outer) return outer.error();
  f.outer_ = std::move(*outer);
  std::string inner = f.outer_.path() + "/d";
  if (::mkdir(inner.c_str(), 0700) != 0) return ErrnoError("create stdio FIFO directory", inner);
  auto in = MakeFifo(inner + "/in", uid, gid);
  if (!in) return in.error();
  auto out = MakeFifo(inner + "/out", uid, gid);
  if (!out) return out.error();
  auto ready = MakeFifo(inner + "/ready", uid, gid);
  if (!ready) return ready.error();
  MCPCELL_TRY(HandToCellUser(HandoverFor(uid), -1, inner, uid, gid, 5, "hand stdio FIFO directory to the cell's user"));
  f.inner_ = inner;
  f.in_ = std::move(*in);
  f.out_ = std::move(*out);
  f.ready_ = std::move(*ready);
  return f;
}

std::vector<std::string> FifoCommand(const std::vector<std::string>& argv, const std::string& gate) {
  std::string dir = kStdioTarget;
  std::string script = "exec <" + dir + "/in >" + dir + "/out && printf x >" + dir + "/ready && exec \"$@\"";
  if (!gate.empty()) script = "read -r _ <" + gate + " && " + script;
  std::vector<std::string> cmd{"/bin/sh", "-c", script, "mcpcell-stdio"};
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  return cmd;
}

int ReapStdioDirs() { return ReapDeadRunDirs(kParent, kPrefix); }

}  // namespace mcpcell::docker
