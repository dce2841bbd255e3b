// A container cell's allow-list (src/cell/docker/container_net.h): the create
// body gives the container no network of the engine's, binds the egress
// directory and its resolv.conf, and puts the gate in front of the server;
// gVisor, shell-less cells and callers without CAP_SYS_ADMIN are refused with
// a reason and an alternative. The part that joins a live container's
// network namespace runs in tests/e2e/docker_egress.test.mjs.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cell/docker/container_net.h"
#include "cell/docker/create_body.h"
#include "cell/docker/stdio_fifos.h"

namespace mcpcell::docker {
namespace {

CellSpec AllowListSpec() {
  CellSpec s;
  s.argv = {"node", "/srv/app/server.js"};
  s.env = {{"HTTP_PROXY", "http://127.0.0.1:3128"}};
  s.workdir = "/home/mcp";
  s.network.mode = NetworkSpec::Mode::kAllowList;
  s.network.allow_hosts = {"wiki.acmecorp.com"};
  return s;
}

ContainerOptions EgressOptions() {
  ContainerOptions o;
  o.image = "mcpcell-base:1";
  o.cell_id = "abc123";
  o.stdio_host_dir = "/dev/shm/mcpcell-stdio-1-x/d";
  o.egress_host_dir = "/dev/shm/mcpcell-net-1-x/d";
  return o;
}

const nlohmann::json* FindMount(const nlohmann::json& body, const std::string& target) {
  for (const auto& m : body["HostConfig"]["Mounts"]) {
    if (m["Target"] == target) return &m;
  }
  return nullptr;
}

TEST(DockerContainerNet, AllowListContainerHasNoEngineNetwork) {
  auto b = BuildCreateBody(AllowListSpec(), EgressOptions());
  ASSERT_TRUE(b.ok()) << b.error().Message();
  EXPECT_EQ((*b)["HostConfig"]["NetworkMode"], "none");
  EXPECT_EQ((*b)["NetworkDisabled"], true);
  EXPECT_EQ((*b)["Env"], nlohmann::json::array({"HTTP_PROXY=http://127.0.0.1:3128"}));
}

TEST(DockerContainerNet, EgressDirectoryAndResolvConfAreBoundReadOnly) {
  auto b = BuildCreateBody(AllowListSpec(), EgressOptions());
  ASSERT_TRUE(b.ok()) << b.error().Message();
  const auto* dir = FindMount(*b, kEgressTarget);
  ASSERT_NE(dir, nullptr);
  EXPECT_EQ((*dir)["Source"], "/dev/shm/mcpcell-net-1-x/d");
  EXPECT_EQ((*dir)["ReadOnly"], true);
  const auto* resolv = FindMount(*b, "/etc/resolv.conf");
  ASSERT_NE(resolv, nullptr);
  EXPECT_EQ((*resolv)["Source"], "/dev/shm/mcpcell-net-1-x/d/resolv.conf");
  EXPECT_EQ((*resolv)["ReadOnly"], true);
}

TEST(DockerContainerNet, ServerWaitsAtTheGate) {
  auto b = BuildCreateBody(AllowListSpec(), EgressOptions());
  ASSERT_TRUE(b.ok()) << b.error().Message();
  const auto& cmd = (*b)["Cmd"];
  ASSERT_GE(cmd.size(), 3U);
  std::string script = cmd[2];
  EXPECT_EQ(script.rfind("read -r _ </run/mcpcell-net/go && exec <", 0), 0U) << script;
  EXPECT_EQ(cmd.back(), "/srv/app/server.js");
}

TEST(DockerContainerNet, NoGateWithoutAllowList) {
  CellSpec s = AllowListSpec();
  s.network.mode = NetworkSpec::Mode::kNone;
  ContainerOptions o = EgressOptions();
  o.egress_host_dir.clear();
  auto b = BuildCreateBody(s, o);
  ASSERT_TRUE(b.ok()) << b.error().Message();
  EXPECT_EQ(std::string((*b)["Cmd"][2]).find("read -r"), std::string::npos);
  EXPECT_EQ(FindMount(*b, kEgressTarget), nullptr);
  EXPECT_EQ(FindMount(*b, "/etc/resolv.conf"), nullptr);
}

TEST(DockerContainerNet, AllowListWithoutFifoWrapperIsRefusedNotOpened) {
  ContainerOptions o = EgressOptions();
  o.stdio_host_dir.clear();  // attach stdio: no wrapper, no gate
  auto b = BuildCreateBody(AllowListSpec(), o);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().Message().find("allow-list"), std::string::npos);
}

TEST(DockerContainerNet, FifoCommandGateComesFirst) {
  auto cmd = FifoCommand({"srv", "a b"}, "/run/g");
  ASSERT_EQ(cmd.size(), 6U);
  EXPECT_EQ(cmd[0], "/bin/sh");
  EXPECT_EQ(cmd[2].rfind("read -r _ </run/g && exec <", 0), 0U) << cmd[2];
  EXPECT_EQ(cmd[4], "srv");
  EXPECT_EQ(cmd[5], "a b");
  EXPECT_EQ(FifoCommand({"srv"})[2].find("read -r"), std::string::npos);
}

TEST(DockerContainerNet, GvisorIsRefusedWithTheReasonAndWhatToUse) {
  auto ok = CheckContainerEgress("runsc", false, true);
  ASSERT_FALSE(ok);
  std::string m = ok.error().Message();
  EXPECT_NE(m.find("gVisor"), std::string::npos) << m;
  EXPECT_NE(m.find("netstack"), std::string::npos) << m;
  EXPECT_NE(m.find("--isolate=docker"), std::string::npos) << m;
}

TEST(DockerContainerNet, ShellLessCellIsRefused) {
  auto ok = CheckContainerEgress("", false, true);
  ASSERT_FALSE(ok);
  EXPECT_NE(ok.error().Message().find("/bin/sh"), std::string::npos) << ok.error().Message();
}

TEST(DockerContainerNet, WithoutCapSysAdminIsRefusedSayingRoot) {
  auto ok = CheckContainerEgress("", true, false);
  ASSERT_FALSE(ok);
  std::string m = ok.error().Message();
  EXPECT_NE(m.find("root"), std::string::npos) << m;
  EXPECT_NE(m.find("--isolate=native"), std::string::npos) << m;
  EXPECT_TRUE(CheckContainerEgress("", true, true));
}

TEST(DockerContainerNet, HasCapSysAdminMatchesProcStatus) {
  std::ifstream status("/proc/self/status");
  std::string line;
  unsigned long long eff = 0;
  while (std::getline(status, line)) {
    if (line.rfind("CapEff:", 0) == 0) eff = std::stoull(line.substr(7), nullptr, 16);
  }
  EXPECT_EQ(HasCapSysAdmin(), (eff >> 21 & 1ULL) != 0);  // CAP_SYS_ADMIN = 21
}

TEST(DockerContainerNet, PrepareMakesResolvConfAndGate) {
  if (::access("/dev/shm", W_OK) != 0) GTEST_SKIP() << "/dev/shm is not writable here";
  auto e = ContainerEgress::Prepare(::geteuid(), ::getegid());
  ASSERT_TRUE(e.ok()) << e.error().Message();
  std::string dir = e->host_dir();
  std::ifstream resolv(dir + "/resolv.conf");
  std::stringstream text;
  text << resolv.rdbuf();
  EXPECT_EQ(text.str(), "nameserver 127.0.0.53\n");
  struct stat st{};
  ASSERT_EQ(::stat((dir + "/go").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0400U);
  auto binds = EgressBinds(dir);
  ASSERT_EQ(binds.size(), 2U);
  EXPECT_EQ(binds[1].source, dir + "/resolv.conf");
  ContainerEgress moved = std::move(*e);
  EXPECT_EQ(moved.host_dir(), dir);
  { ContainerEgress gone = std::move(moved); }
  EXPECT_NE(::access(dir.c_str(), F_OK), 0) << "the egress directory outlived its owner";
}

}  // namespace
}  // namespace mcpcell::docker
