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

struct ScratchDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("mcpcell-cred-" + std::to_string(::getpid()) + "-" +
                                std::to_string(reinterpret_cast<std::uintptr_t>(this)));
  ScratchDir() { std::filesystem::create_directories(path); }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  void File(const std::string& rel, const std::string& content = "secret\n") const {
    std::filesystem::create_directories((path / rel).parent_path());
    std::ofstream(path / rel) << content;
  }
};

bool Has(const CredentialScan& scan, const std::filesystem::path& p) {
  return std::find(scan.found.begin(), scan.found.end(), p.string()) != scan.found.end();
}

TEST(CredentialsBeneath, FindsWhatANamedDirectoryWouldExpose) {
  ScratchDir d;
  std::filesystem::create_directories(d.path / ".ssh");
  std::filesystem::create_directories(d.path / ".config/gcloud");
  std::filesystem::create_directories(d.path / "notes");
  d.File(".netrc", "machine x password y\n");
  auto found = CredentialsBeneath(d.path.string());
  EXPECT_TRUE(Has(found, d.path / ".ssh"));
  EXPECT_TRUE(Has(found, d.path / ".config/gcloud"));
  EXPECT_TRUE(Has(found, d.path / ".netrc"));
  EXPECT_FALSE(Has(found, d.path / "notes"));
  EXPECT_FALSE(found.truncated);
}

// pip's and uv's configs hold index URLs with tokens (adv_uvx.test.mjs):
// hidden under a grant of ~/.config or ~, as .pypirc is.
TEST(CredentialsBeneath, FindsPipAndUvConfigs) {
  ScratchDir d;
  for (const char* rel : {"home/.config/pip/pip.conf", "home/.pip/pip.conf", "home/.config/uv/uv.toml"}) d.File(rel);
  const auto home = d.path / "home";
  auto config = CredentialsBeneath((home / ".config").string());
  EXPECT_TRUE(Has(config, home / ".config/pip/pip.conf"));
  EXPECT_TRUE(Has(config, home / ".config/uv/uv.toml"));
  auto all = CredentialsBeneath(home.string());
  EXPECT_TRUE(Has(all, home / ".pip/pip.conf"));
  EXPECT_TRUE(Has(all, home / ".config/pip/pip.conf"));
}

// adv23: registry logins, git's XDG store, cloud and AI-agent tokens, found
// under a grant of ~ as under one of ~/.config.
TEST(CredentialsBeneath, FindsRegistryGitCloudAndAgentLogins) {
  ScratchDir d;
  // {file made, what is found}: a directory entry is found as the directory.
  const std::pair<const char*, const char*> cases[] = {
      {".config/containers/auth.json", ".config/containers/auth.json"},
      {".config/git/credentials", ".config/git/credentials"},
      {".config/helm/registry/config.json", ".config/helm/registry/config.json"},
      {".config/rclone/rclone.conf", ".config/rclone/rclone.conf"},
      {".s3cfg", ".s3cfg"}, {".boto", ".boto"}, {".databrickscfg", ".databrickscfg"},
      {".huggingface/token", ".huggingface/token"}, {".cache/huggingface/token", ".cache/huggingface/token"},
      {".m2/settings.xml", ".m2/settings.xml"}, {".gradle/gradle.properties", ".gradle/gradle.properties"},
      {".composer/auth.json", ".composer/auth.json"}, {".config/composer/auth.json", ".config/composer/auth.json"},
      {".claude/.credentials.json", ".claude/.credentials.json"}, {".codex/auth.json", ".codex/auth.json"},
      {".config/doctl/config.yaml", ".config/doctl"}, {".oci/config", ".oci"}};
  for (const auto& [made, found] : cases) d.File(std::string("home/") + made);
  const auto home = d.path / "home";
  auto all = CredentialsBeneath(home.string());
  for (const auto& [made, found] : cases) EXPECT_TRUE(Has(all, home / found)) << made;
  EXPECT_TRUE(Has(CredentialsBeneath((home / ".config").string()), home / ".config/containers/auth.json"));
}

// Issue 10 item 6: a grant of ~/.config, ~/.local/share or ~/work must not
// show the credentials below it, however deep.
TEST(CredentialsBeneath, FindsCredentialsAtAnyDepth) {
  ScratchDir d;
  for (const char* rel : {"home/.config/gh/hosts.yml", "home/.config/gcloud/credentials.db",
                          "home/.local/share/keyrings/login.keyring", "home/work/sub/proj/.git-credentials",
                          "home/work/sub/proj/.npmrc", "home/work/a/b/c/d/e/.ssh/id_ed25519",
                          "home/work/app/.env", "home/work/app/.env.production", "home/.pgpass",
                          "home/.bash_history", "home/.zsh_history", "home/.python_history", "home/.node_repl_history",
                          "home/.psql_history", "home/.mysql_history", "home/.lesshst", "home/.docker/config.json",
                          "home/.kube/config", "home/.password-store/x.gpg", "home/work/deep/.aws/credentials",
                          "home/work/deep/.azure/accessTokens.json", "home/work/deep/.pypirc"}) {
    d.File(rel);
  }
  d.File("home/work/app/index.js", "code");
  const auto home = d.path / "home";
  auto config = CredentialsBeneath((home / ".config").string());
  EXPECT_TRUE(Has(config, home / ".config/gh"));
  EXPECT_TRUE(Has(config, home / ".config/gcloud"));
  auto share = CredentialsBeneath((home / ".local/share").string());
  EXPECT_TRUE(Has(share, home / ".local/share/keyrings"));
  auto work = CredentialsBeneath((home / "work").string());
  for (const char* rel : {"work/sub/proj/.git-credentials", "work/sub/proj/.npmrc", "work/a/b/c/d/e/.ssh",
                          "work/app/.env", "work/app/.env.production", "work/deep/.aws", "work/deep/.azure",
                          "work/deep/.pypirc"}) {
    EXPECT_TRUE(Has(work, home / rel)) << rel;
  }
  EXPECT_FALSE(Has(work, home / "work/app/index.js"));
  auto all = CredentialsBeneath(home.string());
  for (const char* rel : {".pgpass", ".bash_history", ".zsh_history", ".python_history", ".node_repl_history",
                          ".psql_history", ".mysql_history", ".lesshst", ".docker", ".kube", ".password-store",
                          ".config/gh", ".local/share/keyrings", "work/a/b/c/d/e/.ssh"}) {
    EXPECT_TRUE(Has(all, home / rel)) << rel;
  }
  // Masked whole: nothing inside a found location is listed again.
  EXPECT_FALSE(Has(all, home / ".docker/config.json"));
}

TEST(CredentialsBeneath, AVirtualenvNamedDotEnvIsNotASecretFile) {
  ScratchDir d;
  d.File("proj/.env/bin/python", "#!");
  d.File("proj/.env/lib/.env", "KEY=1");
  auto found = CredentialsBeneath((d.path / "proj").string());
  EXPECT_FALSE(Has(found, d.path / "proj/.env"));
  EXPECT_TRUE(Has(found, d.path / "proj/.env/lib/.env"));
  EXPECT_TRUE(CheckNotCredential((d.path / "proj/.env/bin/python").string()).ok());
  EXPECT_FALSE(CheckNotCredential((d.path / "proj/.env/lib/.env").string()).ok());
}

TEST(CredentialsBeneath, SaysWhenItGaveUp) {
  ScratchDir d;
  std::string deep = "t";
  for (int i = 0; i < 6; ++i) deep += "/d";
  d.File(deep + "/.npmrc");
  auto shallow = CredentialsBeneath(d.path.string(), {1000, 3});
  EXPECT_TRUE(shallow.truncated);
  EXPECT_NE(shallow.gave_up.find("depth 3"), std::string::npos) << shallow.gave_up;
  for (int i = 0; i < 50; ++i) d.File("wide/f" + std::to_string(i), "x");
  auto narrow = CredentialsBeneath(d.path.string(), {20, 24});
  EXPECT_TRUE(narrow.truncated);
  EXPECT_NE(narrow.gave_up.find("20 entries"), std::string::npos) << narrow.gave_up;
  auto full = CredentialsBeneath(d.path.string());
  EXPECT_FALSE(full.truncated);
  EXPECT_TRUE(Has(full, d.path / deep / ".npmrc"));
}

TEST(CredentialsBeneath, DoesNotFollowSymlinks) {
  ScratchDir d;
  d.File("elsewhere/.ssh/id_ed25519");
  std::filesystem::create_directories(d.path / "grant");
  std::filesystem::create_directory_symlink(d.path / "elsewhere", d.path / "grant/link");
  auto found = CredentialsBeneath((d.path / "grant").string());
  EXPECT_TRUE(found.found.empty());
}

TEST(CheckNotCredential, RefusesTheNewNamesAtAnyDepth) {
  for (const char* p : {"/home/a/.pgpass", "/home/a/w/x/.env", "/home/a/backup/id_ed25519", "/srv/p/.envrc", "/home/a/w/.env.local", "/home/a/.bash_history",
                        "/home/a/.lesshst", "/srv/p/.npmrc", "/home/a/.config/gh/hosts.yml",
                        "/home/a/.local/share/keyrings/login.keyring"}) {
    EXPECT_FALSE(CheckNotCredential(p).ok()) << p;
  }
  for (const char* p : {"/home/a/.envrc-notes", "/home/a/environment", "/home/a/.config/ghostty"}) {
    EXPECT_TRUE(CheckNotCredential(p).ok()) << p;
  }
}

}  // namespace
}  // namespace mcpcell
