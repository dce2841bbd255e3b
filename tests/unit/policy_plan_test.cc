// PlanLaunch end to end on plain commands (no npm, no privileges): the
// policy decides, --isolate only tightens, deny names its rule, profiles and
// secrets reach the CellSpec.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/launch_plan.h"
#include "temp_dir.h"
#include "util/cache_dir.h"

namespace mcpcell {
namespace {

// The files of this run, in one directory removed when the binary exits.
const testing::TempDir& Files() {
  static const testing::TempDir dir("policy-plan-test");
  return dir;
}

std::string WriteFile(const std::string& name, const std::string& text) {
  std::string path = std::filesystem::path(Files().File(name)).lexically_normal().string();
  std::ofstream(path) << text;
  return path;
}

RunRequest Cmd(std::optional<std::string> policy) {
  RunRequest r;
  r.command = {"/bin/true"};
  r.policy_file = std::move(policy);
  r.dry_run = true;
  return r;
}

// The environment of one test: every PIP_*/UV_* taken out (a machine may set
// PIP_FIND_LINKS or PIP_CERT for its own pip), the package cache the
// account's; all put back at the end.
class PackageSettingsCleared {
 public:
  PackageSettingsCleared() {
    for (char** e = ::environ; e != nullptr && *e != nullptr; ++e) {
      std::string entry(*e);
      std::string name = entry.substr(0, entry.find('='));
      if (name.rfind("PIP_", 0) == 0 || name.rfind("UV_", 0) == 0 || name == "XDG_CACHE_HOME") {
        saved_.emplace_back(name, entry.substr(name.size() + 1));
      }
    }
    for (const auto& [name, value] : saved_) ::unsetenv(name.c_str());
    ::setenv("XDG_CACHE_HOME", AccountCacheBase().c_str(), 1);
  }
  ~PackageSettingsCleared() {
    ::unsetenv("XDG_CACHE_HOME");
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  PackageSettingsCleared(const PackageSettingsCleared&) = delete;
  PackageSettingsCleared& operator=(const PackageSettingsCleared&) = delete;

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
};

// adv11: an allow rule trusted the uvx package of the public index; any pip
// or uv setting in mcpcell's environment (a client's env block sets it) can
// fetch another package of that name, or trust another host, with no cell.
TEST(PlanLaunch, AnAllowedUvxSourceIsRefusedWhilePipOrUvSettingsAreSet) {
  auto policy = WriteFile("allow-uvx.json", R"({"rules": [{"condition": {"source": "uvx"}, "action": "allow"}]})");
  PackageSettingsCleared clean;
  for (const char* name : {"PIP_TRUSTED_HOST", "PIP_NO_INDEX", "PIP_INDEX_URL", "UV_INDEX"}) {
    ::setenv(name, "1", 1);
    RunRequest r;
    r.server = "uvx://mcp-server-fetch@2025.4.7";
    r.policy_file = policy;
    r.dry_run = true;
    auto plan = PlanLaunch(r);
    ::unsetenv(name);
    ASSERT_FALSE(plan.ok()) << name;
    EXPECT_EQ(plan.error().what, "run without a cell") << plan.error().Message();
    EXPECT_NE(plan.error().Message().find(name), std::string::npos) << plan.error().Message();
  }
}

TEST(PlanLaunch, DenyNamesTheRuleAndBuildsNothing) {
  auto policy = WriteFile("deny.json", R"({"rules": [{"name": "no-commands", "condition": {"source": "command"}, "action": "deny"}]})");
  auto plan = PlanLaunch(Cmd(policy));
  ASSERT_TRUE(plan.ok()) << plan.error().Message();
  EXPECT_EQ(plan->action, LaunchPlan::Action::kDeny);
  EXPECT_EQ(plan->rule, policy + " rule 0 \"no-commands\"");
  EXPECT_TRUE(plan->spec.argv.empty());
  // --isolate never overrides a deny.
  RunRequest r = Cmd(policy);
  r.isolate = "";
  EXPECT_EQ(PlanLaunch(r)->action, LaunchPlan::Action::kDeny);
}

TEST(PlanLaunch, AllowByARuleAndIsolateTightensIt) {
  auto policy = WriteFile("allow.json", R"({"rules": [{"condition": {"name": "true"}, "action": "allow"}]})");
  auto plan = PlanLaunch(Cmd(policy));
  ASSERT_TRUE(plan.ok()) << plan.error().Message();
  EXPECT_EQ(plan->action, LaunchPlan::Action::kAllow);
  RunRequest r = Cmd(policy);
  r.isolate = "native";
  auto isolated = PlanLaunch(r);
  ASSERT_TRUE(isolated.ok());
  EXPECT_EQ(isolated->action, LaunchPlan::Action::kIsolate);
  EXPECT_EQ(isolated->rule, "--isolate");
  EXPECT_EQ(ToString(isolated->level), "native");
}

TEST(PlanLaunch, NoPolicyIsolatesWithTheBuiltInDefault) {
  auto plan = PlanLaunch(Cmd(std::nullopt));
  ASSERT_TRUE(plan.ok()) << plan.error().Message();
  EXPECT_EQ(plan->action, LaunchPlan::Action::kIsolate);
  EXPECT_EQ(plan->rule, "built-in default default");
  EXPECT_EQ(plan->spec.network.mode, NetworkSpec::Mode::kNone);
  EXPECT_EQ(plan->explain["trust_facts"]["kind"], "command");
}

// A docker:// source's cell (ImageCellSpec) has the image's /usr: none of
// the host's system mounts, the masks over npm's global npmrc among them
// (they made /usr/etc and /usr/local/etc appear in the image); a grant
// stays. The same request on the host's filesystem has them.
TEST(PlanLaunch, AnImageCellHasNoneOfTheHostsSystemMounts) {
  std::string granted = std::filesystem::canonical(Files().path()).string();
  RunRequest r = Cmd(std::nullopt);
  r.read = {granted};
  auto native = PlanLaunch(r);
  ASSERT_TRUE(native.ok()) << native.error().Message();
  r.command.clear();
  r.server = "docker://alpine:3";
  auto image = PlanLaunch(r);
  ASSERT_TRUE(image.ok()) << image.error().Message();
  auto targets = [](const CellSpec& spec) {
    std::vector<std::string> out;
    for (const auto& m : spec.mounts) out.push_back(m.target);
    return out;
  };
  auto has = [](const std::vector<std::string>& v, const std::string& t) {
    return std::find(v.begin(), v.end(), t) != v.end();
  };
  EXPECT_TRUE(std::any_of(native->spec.mounts.begin(), native->spec.mounts.end(), IsHostSystem));
  EXPECT_TRUE(std::none_of(image->spec.mounts.begin(), image->spec.mounts.end(), IsHostSystem));
  EXPECT_TRUE(has(targets(image->spec), granted)) << "a grant stays";
  for (const char* f : {"/usr/etc/npmrc", "/usr/local/etc/npmrc"}) {
    struct stat st{};
    EXPECT_EQ(has(targets(native->spec), f), ::lstat(f, &st) == 0) << f;
    EXPECT_FALSE(has(targets(image->spec), f)) << f;
  }
}

TEST(PlanLaunch, RuleProfileAndSecretsReachTheSpec) {
  auto profile = WriteFile("fetch.json", R"({"network": {"outbound": {"allow_host": [".acmecorp.com"], "allow_port": [443]}}})");
  auto policy = WriteFile("prof.json", R"({"rules": [{"condition": "always", "action": "isolate", "profile": ")" + profile + R"("}]})");
  auto secret = WriteFile("token", "s3cr3t");
  RunRequest r = Cmd(policy);
  r.secrets = {"TOKEN=" + secret};
  auto plan = PlanLaunch(r);
  ASSERT_TRUE(plan.ok()) << plan.error().Message();
  EXPECT_EQ(plan->spec.network.mode, NetworkSpec::Mode::kAllowList);
  EXPECT_EQ(plan->spec.network.allow_hosts, std::vector<std::string>{".acmecorp.com"});
  ASSERT_EQ(plan->spec.secrets.size(), 1u);
  EXPECT_EQ(plan->spec.secrets[0].name, "TOKEN");
  EXPECT_EQ(plan->spec.secrets[0].host_file, secret);
  EXPECT_EQ(plan->explain.dump().find("s3cr3t"), std::string::npos);
  for (const auto& [k, v] : plan->spec.env) EXPECT_EQ(v.find("s3cr3t"), std::string::npos) << k;
}

TEST(PlanLaunch, SecretScanDefaultsToRedactAndAProfileScanNeedsTheRelay) {
  auto plain = PlanLaunch(Cmd(std::nullopt));
  ASSERT_TRUE(plain.ok()) << plain.error().Message();
  EXPECT_EQ(plain->spec.relay.secrets.to_server, SecretMode::kRedact);
  EXPECT_EQ(plain->spec.relay.secrets.to_client, SecretMode::kRedact);
  auto profile = WriteFile("scan.json", R"({"mcpcell": {"secret_scan": {"mode": "block"}}})");
  RunRequest r = Cmd(std::nullopt);
  r.profile = profile;
  auto plan = PlanLaunch(r);
  ASSERT_TRUE(plan.ok()) << plan.error().Message();
  EXPECT_TRUE(plan->spec.relay.on) << "a profile that asks for a scan gets the relay";
  EXPECT_EQ(plan->spec.relay.secrets.to_server, SecretMode::kBlock);
  r.relay = "off";
  auto off = PlanLaunch(r);
  ASSERT_FALSE(off.ok()) << "a scan asked for and --relay=off: refused, not ignored";
  EXPECT_NE(off.error().Message().find("mcpcell.secret_scan"), std::string::npos) << off.error().Message();
}

// Issue 17: the relay (filters, audit, secret scan, pins) is on for every
// level, not only native, so a user who picks --isolate docker keeps it.
TEST(PlanLaunch, TheRelayIsOnByDefaultInEveryCell) {
  for (const char* level : {"native", "docker", "podman", "gvisor", "container"}) {
    RunRequest r = Cmd(std::nullopt);
    r.isolate = level;
    auto plan = PlanLaunch(r);
    ASSERT_TRUE(plan.ok()) << level << ": " << plan.error().Message();
    EXPECT_TRUE(plan->spec.relay.on) << level;
    EXPECT_EQ(plan->spec.relay.secrets.to_client, SecretMode::kRedact) << level;
    r.relay = "off";
    auto off = PlanLaunch(r);
    ASSERT_TRUE(off.ok()) << level << ": " << off.error().Message();
    EXPECT_FALSE(off->spec.relay.on) << level << ": --relay=off keeps the raw copy";
  }
}

TEST(PlanLaunch, BadPolicyIsAnErrorNotADecision) {
  auto policy = WriteFile("bad.json", R"({"rules": [{"condition": "nope", "action": "isolate"}]})");
  auto plan = PlanLaunch(Cmd(policy));
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().Message().find("$.rules[0].condition: unknown condition \"nope\""), std::string::npos);
}

}  // namespace
}  // namespace mcpcell
