#include "cell/credentials.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace mcpcell {
namespace {

TEST(CheckNotCredential, RefusesCredentialLocationsAndWhatIsInside) {
  for (const char* p : {"/home/a/.ssh", "/home/a/.ssh/id_ed25519", "/root/.aws/credentials", "/home/a/.config/gcloud",
                        "/home/a/.docker/config.json", "/var/run/docker.sock", "/run/docker.sock", "/proc/kcore",
                        "/etc/shadow", "/srv/backup/alice/.gnupg", "/home/a/.kube/config", "/home/a/.netrc"}) {
    auto s = CheckNotCredential(p);
    ASSERT_FALSE(s.ok()) << p;
    EXPECT_NE(s.error().detail.find("--force-credentials"), std::string::npos) << p;
  }
}

TEST(CheckNotCredential, AllowsOrdinaryPathsThatOnlyLookSimilar) {
  for (const char* p : {"/home/a/notes", "/home/a/.sshd_config_backup", "/data/aws", "/etc/ssl", "/home/a/.config",
                        "/proc/cpuinfo", "/home/a/.ssh-keys-readme.txt"}) {
    EXPECT_TRUE(CheckNotCredential(p).ok()) << p;
  }
}

TEST(CredentialsBeneath, FindsWhatANamedDirectoryWouldExpose) {
  auto base = std::filesystem::temp_directory_path() / ("mcpcell-cred-" + std::to_string(::getpid()));
  std::filesystem::create_directories(base / ".ssh");
  std::filesystem::create_directories(base / ".config/gcloud");
  std::filesystem::create_directories(base / "notes");
  std::ofstream(base / ".netrc") << "machine x password y\n";
  auto found = CredentialsBeneath(base.string());
  auto has = [&](const std::string& rel) {
    return std::find(found.begin(), found.end(), (base / rel).string()) != found.end();
  };
  EXPECT_TRUE(has(".ssh"));
  EXPECT_TRUE(has(".config/gcloud"));
  EXPECT_TRUE(has(".netrc"));
  EXPECT_FALSE(has("notes"));
  std::filesystem::remove_all(base);
}

}  // namespace
}  // namespace mcpcell
