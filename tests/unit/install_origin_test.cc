// install_origin.h: what a cache entry records of where it came from, and
// whether an allow run may trust it (adv13, adv14).
#include "source/install_origin.h"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace mcpcell {
namespace {

std::string InstallWith(const testing::TempDir& dir, const std::string& lock) {
  std::ofstream(dir.File("package-lock.json")) << lock;
  return WhyInstallIsNotPublic(dir.path());
}

TEST(InstallOrigin, AnInstallIsPublicOnlyWhenEveryPackageRecordsThePublicRegistry) {
  testing::TempDir dir("public-install");
  const std::string head = R"({"lockfileVersion":3,"packages":{"":{"dependencies":{"a":"1"}},)";
  EXPECT_EQ(InstallWith(dir, head + R"("node_modules/a":{"resolved":"https://registry.npmjs.org/a/-/a-1.tgz"},)"
                                    R"("node_modules/a/node_modules/b":{"inBundle":true}}})"),
            "");
  std::string why = InstallWith(dir, head + R"("node_modules/a":{"resolved":"http://127.0.0.1:9/a/-/a-1.tgz"}}})");
  EXPECT_NE(why.find("node_modules/a came from http://127.0.0.1:9"), std::string::npos) << why;
  why = InstallWith(dir, head + R"("node_modules/a":{"version":"1.0.0"}}})");
  EXPECT_NE(why.find("does not record where node_modules/a came from"), std::string::npos) << why;
  why = InstallWith(dir, head + R"("node_modules/a":{"resolved":"https://registry.npmjs.org.evil/a.tgz"}}})");
  EXPECT_NE(why, "") << "a prefix of the host name is not the registry";
  EXPECT_NE(InstallWith(dir, "{}"), "");
  EXPECT_NE(WhyInstallIsNotPublic(dir.File("missing")), "");
}

// adv14: the settings an install was made under, recorded beside it; an
// entry with no record, or one made under other settings, is not public.
TEST(InstallOrigin, AnInstallsRecordSaysWhetherItsSettingsWereThePublicRegistrys) {
  testing::TempDir pub("origin-public"), other("origin-other"), none("origin-none");
  ASSERT_TRUE(WriteInstallOrigin(pub.path(), "").ok());
  EXPECT_EQ(WhyOriginIsNotPublic(pub.path()), "");
  ASSERT_TRUE(WriteInstallOrigin(other.path(), "npm's strict-ssl is off").ok());
  std::string why = WhyOriginIsNotPublic(other.path());
  EXPECT_NE(why.find("strict-ssl is off"), std::string::npos) << why;
  EXPECT_NE(WhyOriginIsNotPublic(none.path()).find("no record"), std::string::npos);
  EXPECT_FALSE(WriteInstallOrigin(pub.path(), "").ok()) << "a record is written once (O_EXCL)";
}

}  // namespace
}  // namespace mcpcell
