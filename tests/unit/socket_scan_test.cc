#include "cell/socket_scan.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "cell/spec_builder.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

void MakeSocket(const fs::path& p) {
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, p.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  ::close(s);
}

TEST(FindSockets, FindsNestedSocketsAndStopsAtTheBudget) {
  fs::path d = fs::temp_directory_path() / ("mcpcell-sock-" + std::to_string(::getpid()));
  fs::create_directories(d / "a/b");
  MakeSocket(d / "agent.sock");
  MakeSocket(d / "a/b/deep.sock");
  for (int i = 0; i < 50; ++i) fs::create_directories(d / ("f" + std::to_string(i)));
  auto all = FindSockets(d.string(), 1000);
  EXPECT_FALSE(all.truncated);
  EXPECT_EQ(all.sockets.size(), 2u);
  auto some = FindSockets(d.string(), 10);
  EXPECT_TRUE(some.truncated);

  RunRequest req;
  req.read = {d.string()};
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(req, {"/bin/true"}, &notes);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  int masks = 0;
  for (const auto& m : spec->mounts) {
    if (m.why == "masked" && m.source == "/dev/null") ++masks;
  }
  EXPECT_EQ(masks, 2) << "each socket in a granted dir is covered";
  fs::remove_all(d);
}

}  // namespace
}  // namespace mcpcell
