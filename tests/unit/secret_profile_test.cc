// The profile's mcpcell.secret_scan block: modes, rules, disable, and errors
// that name the file and the JSON path.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "profile/permission_profile.h"

namespace mcpcell {
namespace {

using nlohmann::json;

Result<PermissionProfile> Read(const json& scan) {
  return ProfileFromJson(json{{"mcpcell", {{"secret_scan", scan}}}}, "p.json", "$");
}

std::string ErrorOf(const json& scan) {
  auto p = Read(scan);
  EXPECT_FALSE(p.ok()) << scan.dump();
  return p.ok() ? "" : p.error().Message();
}

TEST(SecretProfile, ModesPerDirectionAndRules) {
  auto p = Read({{"mode", "block"}, {"to_client", "audit"}, {"rules", {{{"name", "acme-key"}, {"regex", "ACME-[0-9]{8}"}}}},
                 {"disable", {"jwt"}}});
  ASSERT_TRUE(p.ok()) << p.error().Message();
  const auto& s = *p->ext.secret_scan;
  EXPECT_EQ(s.to_server, SecretMode::kBlock);
  EXPECT_EQ(s.to_client, SecretMode::kAudit);
  ASSERT_EQ(s.rules.size(), 1u);
  EXPECT_EQ(s.rules[0].name, "acme-key");
  EXPECT_EQ(s.disable, std::vector<std::string>{"jwt"});
  EXPECT_EQ(s.origin, "profile p.json");
}

TEST(SecretProfile, AbsentMeansTheDefault) {
  auto p = ProfileFromJson(json::object(), "p.json", "$");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->ext.secret_scan.has_value());
  SecretPolicy d;
  EXPECT_EQ(d.to_server, SecretMode::kRedact);
  EXPECT_EQ(d.to_client, SecretMode::kRedact);
}

TEST(SecretProfile, ErrorsNameThePath) {
  EXPECT_NE(ErrorOf({{"mode", "mask"}}).find("$.mcpcell.secret_scan.mode"), std::string::npos);
  EXPECT_NE(ErrorOf({{"mode", "mask"}}).find("off, audit, redact or block"), std::string::npos);
  EXPECT_NE(ErrorOf({{"extra", 1}}).find("extra"), std::string::npos);
  std::string bad_regex = ErrorOf({{"rules", {{{"name", "x"}, {"regex", "a(?=b)"}}}}});
  EXPECT_NE(bad_regex.find("$.mcpcell.secret_scan.rules[0].regex"), std::string::npos) << bad_regex;
  EXPECT_NE(ErrorOf({{"rules", {{{"name", "jwt"}, {"regex", "x"}}}}}).find("already a rule's name"), std::string::npos);
  EXPECT_NE(ErrorOf({{"rules", {{{"name", "Bad Name"}, {"regex", "x"}}}}}).find("not a rule name"), std::string::npos);
  EXPECT_NE(ErrorOf({{"rules", {{{"regex", "x"}}}}}).find("needs \"name\" and \"regex\""), std::string::npos);
  EXPECT_NE(ErrorOf({{"disable", {"no-such-rule"}}}).find("$.mcpcell.secret_scan.disable[0]"), std::string::npos);
}

}  // namespace
}  // namespace mcpcell
