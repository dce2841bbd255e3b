#include "source/npx_install.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

TEST(NpxInstallScripts, FoundByScriptOrBindingGypIncludingScopes) {
  char tmpl[] = "/tmp/npx-scripts-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string nm = std::string(tmpl) + "/node_modules";
  auto pkg = [&](const std::string& name, const std::string& manifest) {
    fs::create_directories(nm + "/" + name);
    std::ofstream(nm + "/" + name + "/package.json") << manifest;
  };
  pkg("plain", R"({"name":"plain","scripts":{"test":"x"}})");
  pkg("post", R"({"name":"post","scripts":{"postinstall":"node x.js"}})");
  pkg("gyp", R"({"name":"gyp"})");
  std::ofstream(nm + "/gyp/binding.gyp") << "{}";
  pkg("@s/pre", R"({"name":"@s/pre","scripts":{"preinstall":"sh x"}})");
  pkg("@s/none", R"({"name":"@s/none"})");
  pkg(".bin", R"({"scripts":{"install":"x"}})");
  pkg("broken", "not json");
  EXPECT_EQ(PackagesWithInstallScripts(nm), (std::vector<std::string>{"@s/pre", "gyp", "post"}));
  EXPECT_TRUE(PackagesWithInstallScripts(std::string(tmpl) + "/missing").empty());
  fs::remove_all(tmpl);
}

}  // namespace
}  // namespace mcpcell
