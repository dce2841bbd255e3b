#include "cell/cell_record.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>

#include "cell/stderr_log.h"
#include "source/npx_cache.h"
#include "temp_dir.h"
#include "util/dir_names.h"
#include "util/state_dir.h"

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

// The sweeps over a state directory, as `mcpcell ps` and `mcpcell gc` run
// them twice on the same fd: records of this live process are listed and
// kept, a dead run's record and a stray file go; logs beyond `keep` go,
// oldest first, never a live run's.
TEST(CellRecordSweep, ListsLiveRecordsAndReapsTheRestTwiceOnOneFd) {
  testing::TempDir t("cell-record-test");
  ASSERT_FALSE(t.path().empty());
  UniqueFd dir(::open(t.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir);
  CellRecord live;
  live.id = "aaaaaaaaaaaa";
  live.pid = ::getpid();
  live.pid_start = ProcessStartTicks(::getpid());
  live.server = live.backend = live.network = "x";
  CellRecord dead = live;
  dead.id = "bbbbbbbbbbbb";
  dead.pid_start = live.pid_start + 1;  // a recycled pid: not this run
  std::ofstream(t.File("aaaaaaaaaaaa.json")) << ToJson(live).dump();
  std::ofstream(t.File("bbbbbbbbbbbb.json")) << ToJson(dead).dump();
  std::ofstream(t.File("stray")) << "x";
  for (int round = 0; round < 2; ++round) {
    std::vector<ListedRecord> listed = ListCellRecords(dir.get());
    ASSERT_EQ(listed.size(), round == 0 ? 2u : 1u) << round;
    EXPECT_EQ(std::count_if(listed.begin(), listed.end(), [](const ListedRecord& l) { return l.alive; }), 1);
    SweepCount swept = ReapCellRecords(dir.get());
    EXPECT_EQ(swept.checked, round == 0 ? 3 : 1) << round;
    EXPECT_EQ(swept.removed, round == 0 ? 2 : 0) << round;
  }
  EXPECT_EQ(*DirNames(dir.get()), (std::vector<std::string>{"aaaaaaaaaaaa.json"}));
}

TEST(CellLogSweep, PrunesTheOldestBeyondKeepButNeverALiveRunsLog) {
  testing::TempDir t("cell-log-test");
  ASSERT_FALSE(t.path().empty());
  UniqueFd dir(::open(t.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir);
  const std::vector<std::string> ids{"000000000001", "000000000002", "000000000003", "000000000004"};
  for (std::size_t i = 0; i < ids.size(); ++i) {
    std::ofstream(t.File(ids[i] + ".log")) << "x";
    struct timespec times[2] = {{static_cast<time_t>(1000 + i), 0}, {static_cast<time_t>(1000 + i), 0}};
    ASSERT_EQ(::utimensat(dir.get(), (ids[i] + ".log").c_str(), times, 0), 0);
  }
  std::ofstream(t.File(ids[3] + ".log.1")) << "x";
  std::vector<std::string> listed = ListCellLogIds(dir.get());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, ids);
  // The 2 newest dead-run files stay (...4.log.1, just written, and ...4.log); ...1 is live.
  SweepCount swept = PruneCellLogs(dir.get(), 2, {ids[0]});
  EXPECT_EQ(swept.checked, 5);
  std::vector<std::string> left = *DirNames(dir.get());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{ids[0] + ".log", ids[3] + ".log", ids[3] + ".log.1"}));
  EXPECT_EQ(swept.removed, 2);
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
