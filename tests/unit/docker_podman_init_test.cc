// Podman's container init (issue 9.1): which containers.conf setting names it,
// and the refusal that names the package when it is missing.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <fstream>

#include "cell/docker/podman_init.h"

namespace mcpcell::docker {
namespace {

TEST(PodmanInit, ReadsInitPathOfItsSectionOnly) {
  EXPECT_EQ(InitPathFromConf("[containers]\ninit_path = \"/opt/tini\"\n"), "/opt/tini");
  EXPECT_EQ(InitPathFromConf("[engine]\n  init_path='/opt/x' # comment\n"), "/opt/x");
  // Debian's file: the key commented out.
  EXPECT_EQ(InitPathFromConf("[containers]\n#init_path = \"/usr/libexec/podman/catatonit\"\n"), std::nullopt);
  EXPECT_EQ(InitPathFromConf("[network]\ninit_path = \"/nope\"\n"), std::nullopt);
  EXPECT_EQ(InitPathFromConf("[containers]\ninit_path = \"/a\"\ninit_path = \"/b\"\n"), "/b");
}

class ConfFile {
 public:
  explicit ConfFile(const std::string& text) {
    char tmpl[] = "/tmp/mcpcell-containers-conf-XXXXXX";
    int fd = ::mkstemp(tmpl);
    path_ = tmpl;
    ::close(fd);
    std::ofstream(path_) << text;
    old_ = std::getenv("CONTAINERS_CONF") ? std::getenv("CONTAINERS_CONF") : "";
    ::setenv("CONTAINERS_CONF", path_.c_str(), 1);
  }
  ~ConfFile() {
    ::unlink(path_.c_str());
    if (old_.empty()) ::unsetenv("CONTAINERS_CONF");
    else ::setenv("CONTAINERS_CONF", old_.c_str(), 1);
  }

 private:
  std::string path_, old_;
};

TEST(PodmanInit, ContainersConfAloneDecidesWhenSet) {
  ConfFile conf("[containers]\ninit_path = \"/bin/true\"\n");
  ASSERT_EQ(ContainersConfFiles().size(), 1U);
  EXPECT_EQ(PodmanInitPath(), "/bin/true");
  EXPECT_TRUE(CheckPodmanInit().ok());
}

TEST(PodmanInit, AMissingInitIsRefusedWithWhatToDo) {
  ConfFile conf("[containers]\ninit_path = \"/nonexistent/catatonit\"\n");
  auto r = CheckPodmanInit();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().what, kPodmanInitWhat);
  EXPECT_EQ(r.error().path, "/nonexistent/catatonit");
  EXPECT_EQ(r.error().err, ENOENT);
  EXPECT_NE(r.error().detail.find("init_path in containers.conf"), std::string::npos) << r.error().detail;
  EXPECT_NE(r.error().detail.find("apt-get install catatonit"), std::string::npos) << r.error().detail;
}

TEST(PodmanInit, TheDefaultIsCatatonit) {
  ConfFile conf("[containers]\n");
  EXPECT_EQ(PodmanInitPath(), kPodmanDefaultInit);
}

}  // namespace
}  // namespace mcpcell::docker
