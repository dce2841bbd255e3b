#include "cell/mount_plan.h"

#include <gtest/gtest.h>

namespace mcpcell {
namespace {

MountSpec Bind(const std::string& src, const std::string& dst, bool optional = false) {
  return MountSpec{MountSpec::Kind::kBind, src, dst, false, optional, 0, "test"};
}
MountSpec Tmpfs(const std::string& dst) { return MountSpec{MountSpec::Kind::kTmpfs, "", dst, true, false, 0, "tmp"}; }

TEST(NormalizeCellPath, CollapsesAndRefuses) {
  EXPECT_EQ(*NormalizeCellPath("//a/./b//"), "/a/b");
  EXPECT_EQ(*NormalizeCellPath("/"), "/");
  EXPECT_FALSE(NormalizeCellPath("a/b").ok());
  EXPECT_FALSE(NormalizeCellPath("/a/../etc").ok());
}

TEST(PlanMounts, ParentsBeforeChildrenWhateverTheOrderGiven) {
  auto plan = PlanMounts({Bind("/etc", "/tmp/work/etc"), Tmpfs("/tmp"), Bind("/usr", "/usr")});
  ASSERT_TRUE(plan.ok()) << plan.error().Message();
  ASSERT_EQ(plan->size(), 3u);
  EXPECT_EQ((*plan)[0].target, "/tmp");
  EXPECT_EQ((*plan)[1].target, "/usr");
  EXPECT_EQ((*plan)[2].target, "/tmp/work/etc");
}

TEST(PlanMounts, OptionalMissingSourceIsDroppedRequiredIsAnError) {
  auto plan = PlanMounts({Bind("/nonexistent-mcpcell", "/x", true), Bind("/usr", "/usr")});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->size(), 1u);
  auto bad = PlanMounts({Bind("/nonexistent-mcpcell", "/x")});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().path, "/nonexistent-mcpcell");
  EXPECT_EQ(bad.error().err, ENOENT);
}

TEST(PlanMounts, ReservedAndDuplicateTargetsAreRefused) {
  for (const char* t : {"/", "/proc", "/proc/self", "/dev", "/dev/shm", "/sys", "/run/secrets/x"}) {
    auto r = PlanMounts({Bind("/usr", t)});
    ASSERT_FALSE(r.ok()) << t;
    EXPECT_NE(r.error().detail.find("reserved"), std::string::npos) << t;
  }
  auto dup = PlanMounts({Bind("/usr", "/data"), Bind("/etc", "/data/")});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().detail.find("named twice"), std::string::npos);
}

TEST(PlanMounts, RelativeSourceIsRefused) {
  EXPECT_FALSE(PlanMounts({Bind("usr", "/usr")}).ok());
}

}  // namespace
}  // namespace mcpcell
