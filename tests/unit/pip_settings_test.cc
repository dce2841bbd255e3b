#include "source/pip_settings.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace mcpcell {
namespace {

TEST(PipSettings, KeepsIndexKeysWithTheCommandsSectionOverGlobal) {
  auto s = ParsePipConfigList(
      "global.index-url='https://mirror.example/simple'\n"
      "global.timeout='5'\n"
      "install.index-url='https://install.example/simple'\n"
      "index.retries='0'\n");
  EXPECT_TRUE(s.unused.empty());
  EXPECT_EQ(s.Env("install"),
            (std::vector<std::string>{"PIP_INDEX_URL=https://install.example/simple", "PIP_TIMEOUT=5"}));
  EXPECT_EQ(s.Env("index"),
            (std::vector<std::string>{"PIP_INDEX_URL=https://mirror.example/simple", "PIP_RETRIES=0", "PIP_TIMEOUT=5"}));
}

TEST(PipSettings, WhatIsBuiltAndWhereItIsWrittenAreNotPassedOnButNamed) {
  // adv14: [install] target= wrote the package outside the cache; requirement=
  // named a file whose --no-binary ran a setup.py on the host.
  auto s = ParsePipConfigList(
      "install.target='/home/u/.local/lib/python3.11/site-packages'\n"
      "global.requirement='/tmp/r.txt'\n"
      "install.user='true'\n"
      "global.no-binary=':all:'\n"
      "global.no-cache-dir='true'\n"
      "global.log='/tmp/pip.log'\n");
  EXPECT_TRUE(s.Env("install").empty());
  EXPECT_EQ(s.unused, (std::vector<std::string>{"install.target", "global.requirement", "install.user", "global.no-binary",
                                                 "global.log"}));
  std::string note = UnusedPipSettingsNote(s);
  EXPECT_NE(note.find("install.target"), std::string::npos);
  EXPECT_NE(note.find("global.no-binary"), std::string::npos);
  EXPECT_EQ(note.find("no-cache-dir"), std::string::npos);  // mcpcell sets it anyway
}

TEST(PipSettings, ReprEscapesAndMultipleValues) {
  auto s = ParsePipConfigList(
      "global.extra-index-url='https://a.example/simple\\nhttps://b.example/simple'\n"
      "global.trusted-host=\"it's.example\"\n"
      "global.cert='C:\\\\certs'\n");
  EXPECT_EQ(s.Env("install"), (std::vector<std::string>{"PIP_CERT=C:\\certs",
                                                         "PIP_EXTRA_INDEX_URL=https://a.example/simple https://b.example/simple",
                                                         "PIP_TRUSTED_HOST=it's.example"}));
}

TEST(PipSettings, UnknownEscapesEnvironmentKeysAndNoiseAreNotGuessed) {
  auto s = ParsePipConfigList(
      ":env:.index-url='https://env.example'\n"
      "global.index-url='https://x\\x00y'\n"
      "global.proxy='unterminated\n"
      "WARNING: something pip printed\n"
      "\n"
      "global.index-url\n");
  EXPECT_TRUE(s.Env("install").empty());
  EXPECT_EQ(s.unused, (std::vector<std::string>{"global.index-url", "global.proxy"}));
}

TEST(PipSettings, NoUnusedKeysNoNote) { EXPECT_EQ(UnusedPipSettingsNote(ParsePipConfigList("")), ""); }

// adv16: PIP_PYTHON had the host pip re-run itself under any program,
// PIP_LOG append its log to any file; adv13: PIP_TARGET, PIP_REQUIREMENT.
TEST(PipSettings, OnlyTheIndexVariablesOfTheCallerReachThePip) {
  std::vector<std::string> entries = {"PIP_INDEX_URL=https://m.example/simple", "PIP_CERT=/etc/ssl/certs/ca-certificates.crt",
                                      "PIP_DEFAULT_TIMEOUT=180", "PIP_PYTHON=/tmp/x", "PIP_LOG=/root/.bashrc",
                                      "PIP_TARGET=/tmp/t", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PATH=/usr/bin", "PIPX=1"};
  EXPECT_EQ(NonIndexPipVariables(entries), (std::vector<std::string>{"PIP_PYTHON", "PIP_LOG", "PIP_TARGET"}));
  EXPECT_TRUE(IsPipIndexKey("find-links"));
  EXPECT_FALSE(IsPipIndexKey("python"));
}

// adv21: pip prints its index URLs whole but for a userinfo password; the
// path token of a Gemfury-style index, in any index variable, is masked.
TEST(PipSettings, TheIndexUrlsPathTokensAreMasked) {
  std::vector<std::string> env = {
      "PIP_INDEX_URL=https://pypi.fury.io/1a2B3c4D5e6F7g8H9i0J/acme/",
      "PIP_EXTRA_INDEX_URL=https://a.example/simple https://b.example/0123456789abcdef0123456789abcdef/simple",
      "PIP_DEFAULT_TIMEOUT=1a2B3c4D5e6F7g8H9i0JxyzQ", "PATH=/usr/bin"};
  auto pieces = PipIndexTokenPieces(env);
  auto has = [&](const std::string& p) { return std::find(pieces.begin(), pieces.end(), p) != pieces.end(); };
  EXPECT_TRUE(has("1a2B3c4D5e6F7g8H9i0J"));
  EXPECT_TRUE(has("0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(has("1a2B3c4D5e6F7g8H9i0JxyzQ")) << "not an index variable";
  EXPECT_TRUE(PipIndexTokenPieces({"PIP_INDEX_URL=https://pypi.org/simple"}).empty());
}

}  // namespace
}  // namespace mcpcell
