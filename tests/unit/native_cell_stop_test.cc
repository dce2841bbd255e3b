// A real native cell's stop order (namespaces, its PID 1, the supervisor's
// epoll), driven through the Cell the backend returns: Cell::Stop(grace)
// sends SIGTERM now and SIGKILL once `grace` has passed; the client closing
// stdin gives the server the spec's grace to leave, then the same order.
// How the cell ended tells which step ended it: the server's own exit code
// (it left on SIGTERM or EOF, within the grace) or 137 (PID 1 SIGKILLed
// after it). No timing is asserted. Each case runs in a forked child whose
// fds 0 and 1 are the test's pipes: the cell's stdin and stdout are handed
// over as they are (relay off), as with a client's pipes. Bounded: alarm(2).

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "cell/backend.h"
#include "cell/native/stdio_relay.h"
#include "cli/launch_plan.h"
#include "forked_child.h"

namespace mcpcell {
namespace {

using std::chrono::milliseconds;

constexpr unsigned kChildSeconds = 60;  ///< the whole case, cell start included

// Whether this process may make a user namespace, which a native cell needs
// when it runs unprivileged (a forked child tries: unshare changes its caller).
std::optional<std::string> WhyNoNativeCell() {
  if (::geteuid() == 0) return std::nullopt;
  testing::ChildOutcome o = testing::RunInChild([]() -> std::string {
    return ::unshare(CLONE_NEWUSER) == 0 ? "" : std::string("unshare(CLONE_NEWUSER): ") + std::strerror(errno);
  });
  if (o.exited_ok() && o.report.empty()) return std::nullopt;
  return o.report.empty() ? "the user-namespace probe did not finish" : o.report;
}

struct Case {
  std::string script;                  ///< the server: sh -c SCRIPT; prints "ready" once its traps are set
  std::optional<milliseconds> stop;    ///< Cell::Stop(grace) once it is ready
  bool close_stdin = false;            ///< the client closes stdin once it is ready
  milliseconds spec_grace{3'600'000};  ///< CellSpec.stop_grace (stdin EOF → SIGTERM → SIGKILL)
};

// Moves a fresh pipe's `keep` end onto fd `target` (the cell inherits it);
// returns the other end, ours.
int PipeOnto(int target, bool cell_reads) {
  int p[2];
  if (::pipe(p) != 0) return -1;
  int cell = cell_reads ? p[0] : p[1], ours = cell_reads ? p[1] : p[0];
  if (::dup2(cell, target) < 0) return -1;
  ::close(cell);
  ::fcntl(ours, F_SETFD, FD_CLOEXEC);
  return ours;
}

bool ReadReady(int fd) {
  std::string got;
  char c;
  while (got.size() < 16 && ::read(fd, &c, 1) == 1) {
    if (c == '\n') return got == "ready";
    got += c;
  }
  return false;
}

// In the forked child: the cell's exit code as text, or what went wrong.
std::string RunCase(const Case& c) {
  ::alarm(kChildSeconds);  // default action: the child dies, the parent sees SIGALRM
  int to_cell = PipeOnto(STDIN_FILENO, true);
  int from_cell = PipeOnto(STDOUT_FILENO, false);
  if (to_cell < 0 || from_cell < 0) return std::string("pipe: ") + std::strerror(errno);
  RunRequest r;
  r.command = {"/bin/sh", "-c", c.script};
  r.isolate = "native";
  r.relay = "off";
  auto plan = PlanLaunch(r);
  if (!plan.ok()) return "plan: " + plan.error().Message();
  plan->spec.stop_grace = c.spec_grace;
  auto backend = BackendFor(CellTarget{IsolationLevel::kNative, std::nullopt, false});
  if (!backend.ok()) return "backend: " + backend.error().Message();
  auto stdio = StdioRelay::Prepare();
  if (!stdio.ok()) return "stdio: " + stdio.error().Message();
  RunContext ctx{"stop-test", nullptr};
  LaunchCallback on_launch = [](const nlohmann::json&) {};
  StartedCell started = (*backend)->Start(plan->spec, ctx, *stdio, on_launch);
  if (!started.ok()) return "start: " + (started.failure.error ? started.failure.error->Message() : "no error");
  if (!ReadReady(from_cell)) return "the server never said ready";
  if (c.close_stdin) ::close(to_cell);
  if (c.stop) started.cell->Stop(*c.stop);
  CellResult result = started.cell->Wait();
  started.cell.reset();
  stdio->Finish();
  if (result.error) return "cell: " + result.error->Message();
  return "exit " + std::to_string(result.exit_code);
}

class NativeCellStop : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = WhyNoNativeCell()) GTEST_SKIP() << "no native cell for this user here: " << *why;
  }
  static std::string Run(const Case& c) {
    testing::ChildOutcome o = testing::RunInChild([&c] { return RunCase(c); });
    if (o.killed_by(SIGALRM)) return "the case did not end within " + std::to_string(kChildSeconds) + " s";
    if (!o.exited_ok()) return "the child ended with status " + std::to_string(o.status) + ": " + o.report;
    return o.report;
  }
};

// `wait` returns early for a trapped signal (sh runs the trap then); a
// foreground sleep would hold the trap back until it ends.
const std::string kLoop = "echo ready; while :; do sleep 1 & wait $!; done";

TEST_F(NativeCellStop, AServerThatLeavesOnSigtermEndsWithinTheGrace) {
  // An hour of grace: only the server's own exit on SIGTERM ends this case (42).
  EXPECT_EQ(Run({"trap 'exit 42' TERM; " + kLoop, milliseconds(3'600'000)}), "exit 42");
}

TEST_F(NativeCellStop, AServerThatIgnoresSigtermIsKilledAfterTheGrace) {
  // SIGTERM ignored: only the SIGKILL once the grace is over ends it (PID 1 killed: 128 + 9).
  EXPECT_EQ(Run({"trap '' TERM; " + kLoop, milliseconds(200)}), "exit 137");
}

TEST_F(NativeCellStop, ClosedStdinLetsTheServerLeaveOnItsOwn) {
  // The server leaves on EOF (7) within the spec's hour of grace; no signal is needed.
  EXPECT_EQ(Run({"trap '' TERM; echo ready; while read -r line; do :; done; exit 7", std::nullopt, true}), "exit 7");
}

TEST_F(NativeCellStop, ClosedStdinThenSigtermThenSigkillForAServerThatStays) {
  // EOF ignored: SIGTERM after the spec's grace (43 when it obeys) ...
  EXPECT_EQ(Run({"trap 'exit 43' TERM; " + kLoop, std::nullopt, true, milliseconds(200)}), "exit 43");
  // ... and SIGKILL one more grace later when it ignores that too.
  EXPECT_EQ(Run({"trap '' TERM; " + kLoop, std::nullopt, true, milliseconds(200)}), "exit 137");
}

}  // namespace
}  // namespace mcpcell
