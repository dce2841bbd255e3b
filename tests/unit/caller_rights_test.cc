#include "cell/docker/caller_rights.h"

#include <gtest/gtest.h>

namespace mcpcell::docker {
namespace {

CellSpec WithIds(std::uint32_t uid, std::uint32_t gid) {
  CellSpec spec;
  spec.uid = uid;
  spec.gid = gid;
  spec.ids_given = true;
  return spec;
}

// adv23: a docker-group caller picked --uid 0 and the root engine ran the
// server as root. The ids are judged here; the file rights (faccessat as
// the caller) by tests/e2e/adv23_docker_group_rights.test.mjs, which runs
// as that caller.
TEST(CallerRights, ACallerThatIsNotRootMayNameOnlyItsOwnUidAndItsGroups) {
  const std::vector<gid_t> groups{1000, 27};
  EXPECT_TRUE(static_cast<bool>(CheckWithinCallerRights(WithIds(1000, 1000), 1000, groups)));
  EXPECT_TRUE(static_cast<bool>(CheckWithinCallerRights(WithIds(1000, 27), 1000, groups)));
  auto root = CheckWithinCallerRights(WithIds(0, 0), 1000, groups);
  ASSERT_FALSE(static_cast<bool>(root));
  EXPECT_NE(root.error().Message().find("--uid"), std::string::npos) << root.error().Message();
  auto alice = CheckWithinCallerRights(WithIds(1001, 1000), 1000, groups);
  EXPECT_FALSE(static_cast<bool>(alice));
  auto shadow = CheckWithinCallerRights(WithIds(1000, 42), 1000, groups);
  ASSERT_FALSE(static_cast<bool>(shadow));
  EXPECT_NE(shadow.error().Message().find("--gid"), std::string::npos) << shadow.error().Message();
}

TEST(CallerRights, RootAndTheDefaultIdsAreNotJudged) {
  EXPECT_TRUE(static_cast<bool>(CheckWithinCallerRights(WithIds(0, 0), 0, {0})));
  CellSpec claimed;  // no --uid/--gid: mcpcell's claimed id
  claimed.uid = claimed.gid = 70000;
  EXPECT_TRUE(static_cast<bool>(CheckWithinCallerRights(claimed, 1000, {1000})));
}

}  // namespace
}  // namespace mcpcell::docker
