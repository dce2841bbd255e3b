#include "source/uvx_install.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "source/server_ref.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

TEST(UvxNames, NormalizedAsPep503) {
  EXPECT_EQ(NormalizePypiName("Mcp_Server.Fetch"), "mcp-server-fetch");
  EXPECT_EQ(NormalizePypiName("a--_.b"), "a-b");
  EXPECT_EQ(NormalizePypiName("time"), "time");
}

TEST(UvxNames, ExactPythonVersions) {
  for (const char* v : {"1", "1.0", "2025.4.7", "1.0rc1", "1.0.post2", "1.0.dev3", "0.6.2"}) {
    EXPECT_TRUE(IsExactPythonVersion(v)) << v;
  }
  for (const char* v : {"", "latest", ">=1", "1.0+local", "1.0/../x", "..", "1.*", "-1", "1.0;id", "v1.0"}) {
    EXPECT_FALSE(IsExactPythonVersion(v)) << v;
  }
}

TEST(UvxNames, ParseRefusesInexactVersionsAndExtras) {
  EXPECT_TRUE(ParseServerRef(std::string("uvx://mcp-server-fetch@2025.4.7"), {}).ok());
  auto latest = ParseServerRef(std::string("uvx://mcp-server-fetch@latest"), {});
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->version, "") << "latest is the same as no version";
  for (const char* s : {"uvx://x@>=1", "uvx://x@^1.0", "uvx://x[extra]", "uvx://x@1.0+local", "uvx://-x", "uvx://x-",
                        "uvx://x/y", "uvx://x@1.0/.."}) {
    EXPECT_FALSE(ParseServerRef(std::string(s), {}).ok()) << s;
  }
}

/// A venv as pip leaves it: bin/, a dist-info with entry points.
class VenvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/uvx-install-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    venv_ = root_ + "/venv";
    fs::create_directories(venv_ + "/bin");
    fs::create_directories(venv_ + "/lib/python3.11/site-packages/my_server-1.0.dist-info");
    fs::create_symlink("/usr/bin/python3", venv_ + "/bin/python3");
  }
  void TearDown() override { fs::remove_all(root_); }
  void EntryPoints(const std::string& text) {
    std::ofstream(venv_ + "/lib/python3.11/site-packages/my_server-1.0.dist-info/entry_points.txt") << text;
  }
  void Script(const std::string& name) { std::ofstream(venv_ + "/bin/" + name) << "#!/x/python3\n"; }
  std::string root_, venv_;
};

TEST_F(VenvTest, ScriptNamedLikeThePackageWins) {
  EntryPoints("[gui_scripts]\nmy-server = m:gui\n[console_scripts]\nother = m:other\nmy_server = m:main\n");
  Script("my_server");
  Script("other");
  auto s = ConsoleScript(venv_, "My.Server");
  ASSERT_TRUE(s.ok()) << s.error().Message();
  EXPECT_EQ(*s, venv_ + "/bin/my_server");
}

TEST_F(VenvTest, TheOnlyScriptIsTaken) {
  EntryPoints("[console_scripts]\nserve = m:main\n");
  Script("serve");
  auto s = ConsoleScript(venv_, "my-server");
  ASSERT_TRUE(s.ok()) << s.error().Message();
  EXPECT_EQ(*s, venv_ + "/bin/serve");
}

TEST_F(VenvTest, SeveralOthersAreNamedInTheRefusal) {
  EntryPoints("[console_scripts]\na = m:a\nb = m:b\n");
  auto s = ConsoleScript(venv_, "my-server");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().Message().find("among: a, b"), std::string::npos) << s.error().Message();
}

TEST_F(VenvTest, AScriptNameThatIsAPathOrALinkIsRefused) {
  EntryPoints("[console_scripts]\n../../../usr/bin/id = m:main\n");
  EXPECT_FALSE(ConsoleScript(venv_, "my-server").ok());
  EntryPoints("[console_scripts]\nmy-server = m:main\n");
  fs::create_symlink("/usr/bin/id", venv_ + "/bin/my-server");
  auto s = ConsoleScript(venv_, "my-server");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().Message().find("not a regular file"), std::string::npos) << s.error().Message();
}

/// Records what it was asked; Install makes the venv a real install would.
class FakePython : public PythonTool {
 public:
  Result<std::string> LatestVersion(const std::string& package) override {
    asked_latest.push_back(package);
    return latest;
  }
  Status Install(const std::string& package, const std::string& version, const std::string& dir) override {
    installed.push_back(package + "==" + version);
    fs::create_directories(dir + "/bin");
    fs::create_directories(dir + "/lib/python3.11/site-packages/my_server-" + version + ".dist-info");
    std::ofstream(dir + "/pyvenv.cfg") << "home = /usr/bin\n";
    std::ofstream(dir + "/lib/python3.11/site-packages/my_server-" + version + ".dist-info/entry_points.txt")
        << "[console_scripts]\nmy-server = m:main\n";
    std::ofstream(dir + "/bin/my-server") << "#!" << dir << "/bin/python3\n";
    char real[4096];
    if (::realpath("/usr/bin/python3", real) != nullptr) fs::create_symlink(real, dir + "/bin/python3.11");
    return {};
  }
  std::string latest = "2.0";
  std::vector<std::string> asked_latest, installed;
};

TEST_F(VenvTest, PinnedInstallsOnceUnpinnedAsksTheIndex) {
  FakePython tool;
  ServerRef pinned = *ParseServerRef(std::string("uvx://My_Server@1.0"), {});
  auto a = EnsureUvxPackage(pinned, tool, root_ + "/cache", true);
  ASSERT_TRUE(a.ok()) << a.error().Message();
  EXPECT_EQ(a->cache_dir, root_ + "/cache/my-server@1.0");
  EXPECT_EQ(a->bin_path, a->cache_dir + "/bin/my-server");
  EXPECT_EQ(a->interpreter, a->cache_dir + "/bin/python3.11");
  EXPECT_TRUE(a->installed_now);
  auto again = EnsureUvxPackage(pinned, tool, root_ + "/cache", true);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->installed_now);
  EXPECT_TRUE(tool.asked_latest.empty());
  ServerRef latest = *ParseServerRef(std::string("uvx://my-server"), {});
  auto b = EnsureUvxPackage(latest, tool, root_ + "/cache", true);
  ASSERT_TRUE(b.ok()) << b.error().Message();
  EXPECT_EQ(b->version, "2.0");
  EXPECT_EQ(tool.installed, (std::vector<std::string>{"My_Server==1.0", "my-server==2.0"}));
}

TEST_F(VenvTest, AnIndexAnsweringAPathIsNoVersion) {
  FakePython tool;
  tool.latest = "../../../etc";
  auto r = EnsureUvxPackage(*ParseServerRef(std::string("uvx://my-server"), {}), tool, root_ + "/cache", true);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(tool.installed.empty());
  EXPECT_FALSE(fs::exists(root_ + "/etc"));
}

}  // namespace
}  // namespace mcpcell
