// A mount's origin decides what the backends do with it; its `why` words do
// not. A user's grant whose words happen to read "masked" or "system" gets
// a grant's treatment: a Landlock rule, and the bind-source checks of a
// container cell; only the planner's own masks and system dirs are exempt.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cell/docker/create_body.h"
#include "cell/native/landlock_plan.h"
#include "cell/spec_builder.h"

namespace mcpcell {
namespace {

bool HasRule(const std::vector<LandlockPath>& rules, const std::string& path) {
  return std::any_of(rules.begin(), rules.end(), [&](const LandlockPath& p) { return p.path == path; });
}

TEST(MountOrigin, LandlockSkipsOnlyRealMasks) {
  CellSpec spec;
  MountSpec worded{MountSpec::Kind::kBind, "/srv/a", "/srv/a", false, false, 0, "masked"};
  MountSpec mask = WithOrigin(MountSpec{MountSpec::Kind::kBind, "/dev/null", "/srv/b", false, false, 0, "hidden"},
                              MountSpec::Origin::kMasked);
  auto rules = LandlockPathsFor(spec, {worded, mask});
  EXPECT_TRUE(HasRule(rules, "/srv/a")) << "a grant worded \"masked\" is still a grant";
  EXPECT_FALSE(HasRule(rules, "/srv/b")) << "a mask has no rule: nothing may be reached through it";
}

TEST(MountOrigin, ContainerBindChecksSkipOnlyRealSystemDirs) {
  CellSpec spec;
  spec.argv = {"/bin/true"};
  spec.mounts = {MountSpec{MountSpec::Kind::kBind, "/usr", "/usr", false, false, 0, "system"},
                 WithOrigin(MountSpec{MountSpec::Kind::kBind, "/lib", "/lib", false, true, 0, "libs"},
                            MountSpec::Origin::kSystem)};
  std::vector<std::string> checked;
  docker::ContainerOptions opts;
  opts.image = "img";
  opts.exists = [](const std::string&) { return true; };
  opts.check_source = [&checked](const MountSpec& m) -> Status {
    checked.push_back(m.source);
    return {};
  };
  auto body = docker::BuildCreateBody(spec, opts);
  ASSERT_TRUE(body.ok()) << body.error().Message();
  EXPECT_EQ(checked, std::vector<std::string>{"/usr"}) << "only the kSystem mount skips the source checks";
}

TEST(MountOrigin, TheSpecBuilderMarksWhatItMakes) {
  for (const auto& m : SystemMounts(false)) EXPECT_EQ(m.origin, MountSpec::Origin::kSystem) << m.target;
}

// A mask over a file of the host's /usr is a mask to every backend and the
// host's system to an image cell, by its origin alone.
TEST(MountOrigin, ASystemMaskIsAMaskAndTheHostsSystem) {
  auto with = [](MountSpec::Origin o) {
    return WithOrigin(MountSpec{MountSpec::Kind::kBind, "/dev/null", "/usr/etc/npmrc", false, false, 0, "words"}, o);
  };
  EXPECT_TRUE(IsMask(with(MountSpec::Origin::kSystemMasked)));
  EXPECT_TRUE(IsHostSystem(with(MountSpec::Origin::kSystemMasked)));
  EXPECT_TRUE(IsMask(with(MountSpec::Origin::kMasked)));
  EXPECT_FALSE(IsHostSystem(with(MountSpec::Origin::kMasked))) << "a grant's mask stays in an image cell";
  EXPECT_FALSE(IsMask(with(MountSpec::Origin::kSystem)));
  EXPECT_TRUE(IsHostSystem(with(MountSpec::Origin::kSystem)));
  for (auto o : {MountSpec::Origin::kGrant, MountSpec::Origin::kTmp, MountSpec::Origin::kHome,
                 MountSpec::Origin::kServerLink}) {
    EXPECT_FALSE(IsMask(with(o)));
    EXPECT_FALSE(IsHostSystem(with(o)));
  }
  auto rules = LandlockPathsFor(CellSpec{}, {with(MountSpec::Origin::kSystemMasked)});
  EXPECT_FALSE(HasRule(rules, "/usr/etc/npmrc")) << "a system mask has no rule either";
}

// npm's global npmrc (a registry token, adv13) is masked in every cell
// built for the host's filesystem, with the system mask's origin.
TEST(MountOrigin, NpmsGlobalConfigIsMaskedAsTheHostsSystem) {
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(RunRequest{}, {"/bin/true"}, &notes);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  for (const char* f : {"/usr/etc/npmrc", "/usr/local/etc/npmrc"}) {
    struct stat st{};
    bool exists = ::lstat(f, &st) == 0;
    auto it = std::find_if(spec->mounts.begin(), spec->mounts.end(), [&](const MountSpec& m) { return m.target == f; });
    ASSERT_EQ(it != spec->mounts.end(), exists) << f;
    if (!exists) continue;
    EXPECT_EQ(it->source, "/dev/null");
    EXPECT_EQ(it->origin, MountSpec::Origin::kSystemMasked) << f;
  }
}

}  // namespace
}  // namespace mcpcell
