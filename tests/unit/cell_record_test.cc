#include "cell/cell_record.h"

#include <gtest/gtest.h>

#include "source/npx_cache.h"

namespace mcpcell {
namespace {

TEST(CellRecord, RoundTripsAndRefusesWhatIsNoRecord) {
  CellRecord r;
  r.id = "0123456789ab";
  r.pid = 42;
  r.pid_start = 7;
  r.server = "npx://x@1";
  r.backend = "native";
  r.network = "none";
  auto back = CellRecordFromJson(ToJson(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->id, r.id);
  EXPECT_EQ(back->pid_start, 7u);
  auto bad_id = ToJson(r);
  bad_id["id"] = "../../etc/passwd";
  EXPECT_FALSE(CellRecordFromJson(bad_id).has_value());
  EXPECT_FALSE(CellRecordFromJson(nlohmann::json::parse("[1]")).has_value());
  auto missing = ToJson(r);
  missing.erase("pid");
  EXPECT_FALSE(CellRecordFromJson(missing).has_value());
}

TEST(CellRecord, IdsAreTwelveHexDigitsAndDiffer) {
  std::string a = NewRunRecordId();
  EXPECT_EQ(a.size(), 12u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, NewRunRecordId());
}

CachedPackage Pkg(std::string package, std::string version, bool in_use = false) {
  CachedPackage p;
  p.package = std::move(package);
  p.version = std::move(version);
  p.dir = "/c/" + p.package + "@" + p.version;
  p.in_use = in_use;
  return p;
}

std::vector<std::string> Names(const std::vector<CachedPackage>& v) {
  std::vector<std::string> out;
  for (const auto& p : v) out.push_back(p.package + "@" + p.version);
  return out;
}

TEST(ChoosePrune, KeepsTheNewestOfEachAndEverythingInUse) {
  // ListNpxCache's order: by package, newest install first.
  std::vector<CachedPackage> cached{Pkg("a", "3"), Pkg("a", "2", true), Pkg("a", "1"), Pkg("b", "1")};
  EXPECT_EQ(Names(ChoosePrune(cached, false, "")), (std::vector<std::string>{"a@1"}));
  EXPECT_EQ(Names(ChoosePrune(cached, true, "")), (std::vector<std::string>{"a@3", "a@1", "b@1"}));
  EXPECT_EQ(Names(ChoosePrune(cached, true, "b")), (std::vector<std::string>{"b@1"}));
  EXPECT_EQ(Names(ChoosePrune(cached, false, "a@3")), (std::vector<std::string>{"a@3"}));
  EXPECT_TRUE(ChoosePrune(cached, false, "a@2").empty());  // in use
}

}  // namespace
}  // namespace mcpcell
