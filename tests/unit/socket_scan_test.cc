#include "cell/socket_scan.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "cell/credentials.h"
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
    if (m.why == "masked" && m.source == "/dev/null" && m.target.rfind(d.string(), 0) == 0) ++masks;
  }
  EXPECT_EQ(masks, 2) << "each socket in a granted dir is covered";
  fs::remove_all(d);
}

// One walk serves both scans (credentials.h, ScanGrant): a socket where the
// credential scan does not look (a pruned node_modules, below a credential
// location it masks whole, deeper than its depth limit) is still found, and
// each scan keeps its own budget.
TEST(ScanGrant, FindsSocketsWhereTheCredentialScanDoesNotLook) {
  fs::path d = fs::temp_directory_path() / ("mcpcell-grant-" + std::to_string(::getpid()));
  fs::create_directories(d / "node_modules/pkg");
  fs::create_directories(d / ".ssh");
  fs::create_directories(d / "a/b/c");
  MakeSocket(d / "node_modules/pkg/s1.sock");
  MakeSocket(d / ".ssh/agent.sock");
  MakeSocket(d / "a/b/c/s3.sock");
  GrantScan both = ScanGrant(d.string(), 1000, CredentialScanLimits{200'000, 2});
  EXPECT_EQ(both.sockets.sockets.size(), 3u);
  EXPECT_FALSE(both.sockets.truncated);
  EXPECT_TRUE(both.creds.truncated) << "a/b/c is deeper than the credential scan's depth limit";
  EXPECT_NE(std::find(both.creds.found.begin(), both.creds.found.end(), (d / ".ssh").string()), both.creds.found.end());

  GrantScan deep = ScanGrant(d.string(), 1000);
  EXPECT_FALSE(deep.creds.truncated);
  EXPECT_EQ(deep.sockets.sockets.size(), 3u);

  GrantScan few = ScanGrant(d.string(), 3);
  EXPECT_TRUE(few.sockets.truncated);
  EXPECT_FALSE(few.creds.truncated) << "the socket budget does not cut the credential scan short";
  EXPECT_EQ(few.creds.found.size(), 1u);
  fs::remove_all(d);
}

}  // namespace
}  // namespace mcpcell
