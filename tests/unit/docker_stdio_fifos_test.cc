// The FIFO stdio path: the container command that wires the server to the
// FIFOs, the create body that binds them, and the EOF semantics mcpcell's ends
// rely on (closing `in` is the server's EOF; `out` never reports EOF to us).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cell/docker/create_body.h"
#include "cell/docker/stdio_fifos.h"

namespace mcpcell::docker {
namespace {

TEST(StdioFifos, CommandExecsTheServerWithRedirectedStdio) {
  auto cmd = FifoCommand({"node", "/srv/a b.js", "--flag=$HOME"});
  ASSERT_EQ(cmd.size(), 7U);
  EXPECT_EQ(cmd[0], "/bin/sh");
  EXPECT_EQ(cmd[1], "-c");
  EXPECT_EQ(cmd[2],
            "exec </run/mcpcell-stdio/in >/run/mcpcell-stdio/out && printf x >/run/mcpcell-stdio/ready && "
            "exec \"$@\"");
  // The server's argv travels as positional parameters: never parsed by the shell.
  EXPECT_EQ(cmd[4], "node");
  EXPECT_EQ(cmd[5], "/srv/a b.js");
  EXPECT_EQ(cmd[6], "--flag=$HOME");
}

TEST(StdioFifos, CreateBodyBindsThemAndAttachesNoStdin) {
  CellSpec spec;
  spec.argv = {"node", "server.js"};
  ContainerOptions o;
  o.image = "mcpcell-base:1";
  o.stdio_host_dir = "/dev/shm/mcpcell-stdio-1-x/d";
  auto b = BuildCreateBody(spec, o);
  ASSERT_TRUE(b.ok()) << b.error().Message();
  EXPECT_EQ((*b)["Cmd"], nlohmann::json(FifoCommand(spec.argv)));
  EXPECT_EQ((*b)["OpenStdin"], false);
  EXPECT_EQ((*b)["AttachStdin"], false);
  bool bound = false;
  for (const auto& m : (*b)["HostConfig"]["Mounts"]) {
    if (m["Target"] == kStdioTarget) bound = m["Source"] == o.stdio_host_dir && m["ReadOnly"] == true;
  }
  EXPECT_TRUE(bound);
}

TEST(StdioFifos, WithoutThemStdinIsAttached) {
  CellSpec spec;
  spec.argv = {"node"};
  ContainerOptions o;
  auto b = BuildCreateBody(spec, o);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)["Cmd"], nlohmann::json::array({"node"}));
  EXPECT_EQ((*b)["OpenStdin"], true);
  EXPECT_EQ((*b)["StdinOnce"], true);
}

TEST(StdioFifos, EndsBehaveAsThePumpExpects) {
  auto f = StdioFifos::Create(::geteuid(), ::getegid());
  ASSERT_TRUE(f.ok()) << f.error().Message();
  std::string dir = f->bind_source();
  struct stat st{};
  ASSERT_EQ(::stat((dir + "/in").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600U);

  // The server's side of stdin: reads what we wrote, then EOF once our end is closed.
  int server_in = ::open((dir + "/in").c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(server_in, 0);
  ASSERT_EQ(::write(f->in().get(), "ping\n", 5), 5);
  f->in().reset();
  char buf[16];
  EXPECT_EQ(::read(server_in, buf, sizeof buf), 5);
  EXPECT_EQ(::read(server_in, buf, sizeof buf), 0) << "closing our end must be the server's EOF";
  ::close(server_in);

  // The server's side of stdout: after it closed, we read its bytes, then EAGAIN (never EOF).
  int server_out = ::open((dir + "/out").c_str(), O_WRONLY | O_NONBLOCK);
  ASSERT_GE(server_out, 0);
  ASSERT_EQ(::write(server_out, "pong\n", 5), 5);
  ::close(server_out);
  EXPECT_EQ(::read(f->out().get(), buf, sizeof buf), 5);
  EXPECT_EQ(::read(f->out().get(), buf, sizeof buf), -1);
  EXPECT_EQ(errno, EAGAIN);

  // Destruction removes the directory.
  std::string parent = dir.substr(0, dir.rfind('/'));
  { StdioFifos gone = std::move(*f); }
  EXPECT_NE(::access(parent.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace mcpcell::docker
