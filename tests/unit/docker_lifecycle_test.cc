// A container's life through the engine (container_lifecycle.h), against a
// fake engine that records every call: the order create → attach → start →
// pump → wait → remove, and removal on every path once the container exists.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <map>
#include <string>
#include <vector>

#include "cell/docker/container_lifecycle.h"
#include "core/exit_codes.h"

namespace mcpcell::docker {
namespace {

// Answers like dockerd unless told to fail a step; remembers "METHOD path".
class FakeEngine : public EngineApi {
 public:
  Result<HttpReply> Call(std::string_view method, const std::string& target, const std::string& /*body*/,
                         std::string_view /*content_type*/, bool /*no_timeout*/) const override {
    std::string step = Step(method, target);
    calls.push_back(step);
    if (auto it = errors.find(step); it != errors.end()) return it->second;
    if (auto it = replies.find(step); it != replies.end()) return it->second;
    if (step == "POST create") return HttpReply{201, R"({"Id":"c)" + std::to_string(++created) + R"(","Warnings":[]})"};
    if (step == "POST start") return HttpReply{204, ""};
    if (step == "POST wait") return HttpReply{200, R"({"StatusCode":7})"};
    if (step == "DELETE container") return HttpReply{204, ""};
    if (step == "POST kill") return HttpReply{204, ""};
    if (step == "GET archive") return HttpReply{200, ""};
    return HttpReply{404, R"({"message":"fake: no such call"})"};
  }
  Result<HttpReply> CallWithin(std::string_view method, const std::string& target,
                               std::chrono::milliseconds /*timeout*/) const override {
    return Call(method, target, {}, "application/json", false);
  }
  Result<HijackedStream> Hijack(const std::string& target) const override {
    calls.push_back(Step("POST", target));
    if (auto it = errors.find("POST attach"); it != errors.end()) return it->second;
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return ErrnoError("socketpair");
    peer = UniqueFd(sv[1]);
    return HijackedStream{UniqueFd(sv[0]), ""};
  }

  // "POST /containers/c1/start" → "POST start"; "/containers/create?..." → "POST create".
  static std::string Step(std::string_view method, const std::string& target) {
    std::string path = target.substr(0, target.find('?'));
    std::string last = path.substr(path.rfind('/') + 1);
    if (std::string(method) == "DELETE") last = "container";
    return std::string(method) + " " + last;
  }

  mutable std::vector<std::string> calls;
  std::map<std::string, Error> errors;       ///< the exchange fails (connect, timeout)
  std::map<std::string, HttpReply> replies;  ///< the engine answers this instead
  mutable int created = 0;
  mutable UniqueFd peer;
};

struct Recorded {
  std::vector<std::string> steps;  ///< the non-engine steps, in order
};

ContainerLaunch Launch(Recorded* rec, bool fifo = false) {
  ContainerLaunch l;
  l.name = "mcpcell-test";
  l.socket = "/fake.sock";
  l.fifo_stdio = fifo;
  l.body = [rec](bool f) -> Result<nlohmann::json> {
    rec->steps.push_back(f ? "body fifo" : "body attach");
    return nlohmann::json::object();
  };
  l.attach_fallback_allowed = [rec]() -> Status {
    rec->steps.push_back("attach fallback");
    return {};
  };
  l.before_start = [rec]() -> Status {
    rec->steps.push_back("recheck sources");
    return {};
  };
  l.after_start = [rec](const std::string& id) -> Status {
    rec->steps.push_back("serve " + id);
    return {};
  };
  l.launched = [rec](const std::string& id, bool f) { rec->steps.push_back("launched " + id + (f ? " fifo" : " attach")); };
  l.pump = [rec](HijackedStream, bool, const KillContainer&) -> Result<PumpOutcome> {
    rec->steps.push_back("pump");
    return PumpOutcome{};
  };
  return l;
}

using Calls = std::vector<std::string>;

TEST(ContainerLifecycle, RunsInOrderAndRemovesTheContainer) {
  FakeEngine fake;
  Recorded rec;
  CellResult r = RunContainer(fake, fake, Launch(&rec), CellResult{});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_FALSE(r.error) << r.error->Message();
  EXPECT_EQ(fake.calls, (Calls{"POST create", "POST attach", "POST start", "POST wait", "DELETE container"}));
  EXPECT_EQ(rec.steps, (Calls{"body attach", "recheck sources", "serve c1", "launched c1 attach", "pump"}));
}

TEST(ContainerLifecycle, CreateRefusedLeavesNothingToRemove) {
  FakeEngine fake;
  fake.replies["POST create"] = HttpReply{500, R"({"message":"no space"})"};
  Recorded rec;
  CellResult r = RunContainer(fake, fake, Launch(&rec), CellResult{});
  EXPECT_EQ(r.exit_code, kExitSetupFailed);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->Message().find("no space"), std::string::npos) << r.error->Message();
  EXPECT_EQ(fake.calls, (Calls{"POST create"}));
}

TEST(ContainerLifecycle, BadBodyIsIsolationUnavailableAndCreatesNothing) {
  FakeEngine fake;
  Recorded rec;
  ContainerLaunch l = Launch(&rec);
  l.body = [](bool) -> Result<nlohmann::json> { return MakeError("mount", "/x", "refused"); };
  CellResult r = RunContainer(fake, fake, l, CellResult{});
  EXPECT_EQ(r.exit_code, kExitIsolationUnavailable);
  EXPECT_TRUE(fake.calls.empty());
}

TEST(ContainerLifecycle, AttachFailureRemovesTheContainer) {
  FakeEngine fake;
  fake.errors["POST attach"] = MakeError("attach", "c1", "cut");
  Recorded rec;
  CellResult r = RunContainer(fake, fake, Launch(&rec), CellResult{});
  EXPECT_EQ(r.exit_code, kExitSetupFailed);
  EXPECT_EQ(fake.calls, (Calls{"POST create", "POST attach", "DELETE container"}));
  EXPECT_EQ(rec.steps, (Calls{"body attach"}));
}

TEST(ContainerLifecycle, SourceSwappedBeforeStartIsNeverStarted) {
  FakeEngine fake;
  Recorded rec;
  ContainerLaunch l = Launch(&rec);
  l.before_start = []() -> Status { return MakeError("bind source", "/data", "replaced by a symlink"); };
  CellResult r = RunContainer(fake, fake, l, CellResult{});
  EXPECT_EQ(r.exit_code, kExitSetupFailed);
  EXPECT_EQ(fake.calls, (Calls{"POST create", "POST attach", "DELETE container"}));
}

TEST(ContainerLifecycle, StartRefusedMapsTheRuntimesWordsAndRemoves) {
  for (const auto& [msg, code] : std::vector<std::pair<std::string, int>>{
           {"exec: \"x\": executable file not found in $PATH", kExitNotFound},
           {"exec /x: permission denied", kExitCannotExec},
           {"cgroup trouble", kExitSetupFailed}}) {
    FakeEngine fake;
    fake.replies["POST start"] = HttpReply{400, nlohmann::json{{"message", msg}}.dump()};
    Recorded rec;
    CellResult r = RunContainer(fake, fake, Launch(&rec), CellResult{});
    EXPECT_EQ(r.exit_code, code) << msg;
    EXPECT_EQ(fake.calls, (Calls{"POST create", "POST attach", "POST start", "DELETE container"})) << msg;
    EXPECT_EQ(rec.steps, (Calls{"body attach", "recheck sources"})) << msg;
  }
}

TEST(ContainerLifecycle, EgressThatCannotServeStopsTheRunAndRemoves) {
  FakeEngine fake;
  Recorded rec;
  ContainerLaunch l = Launch(&rec);
  l.after_start = [](const std::string&) -> Status { return MakeError("egress", "c1", "no proxy"); };
  CellResult r = RunContainer(fake, fake, l, CellResult{});
  EXPECT_EQ(r.exit_code, kExitSetupFailed);
  EXPECT_EQ(fake.calls, (Calls{"POST create", "POST attach", "POST start", "DELETE container"}));
  EXPECT_EQ(rec.steps, (Calls{"body attach", "recheck sources"})) << "never launched, never pumped";
}

TEST(ContainerLifecycle, PumpFailureStillRemoves) {
  FakeEngine fake;
  Recorded rec;
  ContainerLaunch l = Launch(&rec);
  l.pump = [](HijackedStream, bool, const KillContainer&) -> Result<PumpOutcome> {
    return MakeError("read the attach stream", "", "EIO");
  };
  CellResult r = RunContainer(fake, fake, l, CellResult{});
  EXPECT_EQ(r.exit_code, kExitSetupFailed);
  EXPECT_EQ(fake.calls, (Calls{"POST create", "POST attach", "POST start", "DELETE container"}));
}

TEST(ContainerLifecycle, EngineGoneDuringTheRunNamesGcAndStillTriesRemoval) {
  FakeEngine fake;
  fake.errors["POST wait"] = Error{"connect to container engine", "/fake.sock", ECONNREFUSED, "down"};
  Recorded rec;
  CellResult r = RunContainer(fake, fake, Launch(&rec), CellResult{});
  EXPECT_EQ(r.exit_code, kExitSetupFailed);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->Message().find("mcpcell gc"), std::string::npos) << r.error->Message();
  EXPECT_EQ(fake.calls.back(), "DELETE container");
}

TEST(ContainerLifecycle, WaitTimeoutKillsThenAsksAgain) {
  FakeEngine fake;
  Recorded rec;
  // The first wait times out (the container closed its output but runs on).
  struct TimingOut : FakeEngine {
    Result<HttpReply> CallWithin(std::string_view m, const std::string& t, std::chrono::milliseconds) const override {
      calls.push_back(Step(m, t));
      return Error{"wait", "c1", ETIMEDOUT, ""};
    }
  } slow;
  CellResult r = RunContainer(slow, slow, Launch(&rec), CellResult{});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(slow.calls, (Calls{"POST create", "POST attach", "POST start", "POST wait", "POST kill", "POST wait",
                               "DELETE container"}));
}

TEST(ContainerLifecycle, TimedOutRunIsExit124) {
  FakeEngine fake;
  Recorded rec;
  ContainerLaunch l = Launch(&rec);
  l.pump = [](HijackedStream, bool, const KillContainer&) -> Result<PumpOutcome> {
    PumpOutcome o;
    o.timed_out = true;
    return o;
  };
  CellResult r = RunContainer(fake, fake, l, CellResult{});
  EXPECT_EQ(r.exit_code, kExitTimeout);
  EXPECT_TRUE(r.timed_out);
}

TEST(ContainerLifecycle, ImageWithoutShellIsCreatedAgainForTheAttachStream) {
  FakeEngine fake;
  fake.replies["GET archive"] = HttpReply{404, R"({"message":"no such file"})"};
  Recorded rec;
  ContainerLaunch l = Launch(&rec, /*fifo=*/true);
  l.image_may_lack_shell = true;
  CellResult r = RunContainer(fake, fake, l, CellResult{});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(fake.calls, (Calls{"POST create", "GET archive", "DELETE container", "POST create", "POST attach",
                               "POST start", "POST wait", "DELETE container"}));
  EXPECT_EQ(rec.steps, (Calls{"body fifo", "attach fallback", "body attach", "recheck sources", "serve c2",
                              "launched c2 attach", "pump"}));
}

TEST(ContainerLifecycle, ImageWithoutShellUnderAnAllowListIsRefusedAndRemoved) {
  FakeEngine fake;
  fake.replies["GET archive"] = HttpReply{404, ""};
  Recorded rec;
  ContainerLaunch l = Launch(&rec, /*fifo=*/true);
  l.image_may_lack_shell = true;
  l.attach_fallback_allowed = []() -> Status { return MakeError("network allow-list", "", "needs the FIFO gate"); };
  CellResult r = RunContainer(fake, fake, l, CellResult{});
  EXPECT_EQ(r.exit_code, kExitIsolationUnavailable);
  EXPECT_EQ(fake.calls, (Calls{"POST create", "GET archive", "DELETE container"}));
}

TEST(ContainerLifecycle, FifoStdioWithAShellKeepsTheFirstContainer) {
  FakeEngine fake;
  Recorded rec;
  ContainerLaunch l = Launch(&rec, /*fifo=*/true);
  l.image_may_lack_shell = true;
  CellResult r = RunContainer(fake, fake, l, CellResult{});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(fake.calls, (Calls{"POST create", "GET archive", "POST attach", "POST start", "POST wait",
                               "DELETE container"}));
  EXPECT_EQ(rec.steps, (Calls{"body fifo", "recheck sources", "serve c1", "launched c1 fifo", "pump"}));
}

}  // namespace
}  // namespace mcpcell::docker
