// Cell::Stop's request, and the container pump's answer to it: SIGTERM at
// once, SIGKILL once the grace the request names has passed (the spec's own
// grace, an hour here, would leave the test waiting).

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cell/cell.h"
#include "cell/docker/stdio_pump.h"

namespace mcpcell {
namespace {

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

TEST(StopRequest, ReadableOnlyOnceRequestedAndKeepsTheGrace) {
  auto stop = StopRequest::Make();
  ASSERT_TRUE(stop.ok()) << stop.error().Message();
  EXPECT_FALSE(Readable(stop->fd()));
  stop->Request(std::chrono::milliseconds(1234));
  EXPECT_TRUE(Readable(stop->fd()));
  EXPECT_EQ(stop->grace(), std::chrono::milliseconds(1234));
}

// A run that records what the handle asked of it, in order.
struct RecordingRun {
  std::vector<std::string>* calls;
  std::optional<CellResult> start_failure;
  std::optional<CellResult> Start() { return start_failure; }
  CellResult Wait() {
    calls->push_back("Wait");
    CellResult r;
    r.exit_code = 7;
    return r;
  }
  void Stop(std::chrono::milliseconds grace) { calls->push_back("Stop " + std::to_string(grace.count())); }
  std::string Identity() const { return "run 1"; }
};

TEST(CellHandle, DroppedUnwaitedIsStoppedAtOnceThenReaped) {
  std::vector<std::string> calls;
  {
    StartedCell started = StartCellHandle(std::make_unique<RecordingRun>(RecordingRun{&calls, std::nullopt}));
    ASSERT_TRUE(started.ok());
    EXPECT_EQ(started.cell->identity(), "run 1");
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"Stop 0", "Wait"}));
}

TEST(CellHandle, WaitedIsNotStoppedOrWaitedAgain) {
  std::vector<std::string> calls;
  {
    StartedCell started = StartCellHandle(std::make_unique<RecordingRun>(RecordingRun{&calls, std::nullopt}));
    ASSERT_TRUE(started.ok());
    started.cell->Stop(std::chrono::milliseconds(250));
    EXPECT_EQ(started.cell->Wait().exit_code, 7);
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"Stop 250", "Wait"}));
}

TEST(CellHandle, FailedStartGivesNoCellAndItsFailure) {
  std::vector<std::string> calls;
  CellResult failure;
  failure.exit_code = 125;
  StartedCell started = StartCellHandle(std::make_unique<RecordingRun>(RecordingRun{&calls, failure}));
  EXPECT_FALSE(started.ok());
  EXPECT_EQ(started.failure.exit_code, 125);
  EXPECT_TRUE(calls.empty());
}

TEST(StdioPumpStop, StopSendsTermNowAndKillAfterItsOwnGrace) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd engine_end(sv[1]);
  int in[2];
  int out[2];
  ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  UniqueFd in_r(in[0]), in_w(in[1]), out_r(out[0]), out_w(out[1]);  // stdin stays open: no EOF order

  auto stop = StopRequest::Make();
  ASSERT_TRUE(stop.ok());
  std::vector<std::string> sent;
  docker::PumpConfig pc;
  pc.client_in = in_r.get();
  pc.client_out = out_w.get();
  pc.client_err = out_w.get();
  pc.grace = std::chrono::hours(1);
  pc.stop = &*stop;
  pc.kill = [&](const char* sig) -> Status {
    sent.emplace_back(sig);
    // The container is gone once killed: the engine closes the attach stream.
    if (sent.back() == "SIGKILL") ::shutdown(engine_end.get(), SHUT_RDWR);
    return {};
  };
  stop->Request(std::chrono::milliseconds(10));
  auto outcome = docker::RunStdioPump(docker::HijackedStream{UniqueFd(sv[0]), ""}, pc);
  ASSERT_TRUE(outcome.ok()) << outcome.error().Message();
  EXPECT_EQ(sent, (std::vector<std::string>{"SIGTERM", "SIGKILL"}));
  EXPECT_EQ(outcome->stop_reason, "Cell::Stop");
  EXPECT_FALSE(outcome->timed_out);
}

}  // namespace
}  // namespace mcpcell
