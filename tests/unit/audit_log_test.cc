// The audit sink: 0600, no symlinks, no loose permissions, one JSON object per line.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "cli/audit_events.h"

namespace mcpcell {
namespace {

std::string TempPath(const char* name) {
  std::string p = ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid());
  ::unlink(p.c_str());
  return p;
}

TEST(AuditLog, CreatesTheFile0600AndAppendsLines) {
  std::string path = TempPath("audit");
  ::umask(022);
  {
    auto log = AuditLog::Open(path);
    ASSERT_TRUE(log.ok()) << log.error().Message();
    ASSERT_TRUE(log->Write({{"event", "decision"}, {"server", "a\nb"}}).ok());
    ASSERT_TRUE(log->Write({{"event", "exit"}, {"server", "x"}}).ok());
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::ifstream in(path);
  std::string line;
  std::vector<nlohmann::json> events;
  while (std::getline(in, line)) events.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["server"], "a\nb");
  EXPECT_TRUE(events[0].contains("ts"));
  EXPECT_EQ(events[1]["event"], "exit");
  ::unlink(path.c_str());
}

TEST(AuditLog, RefusesASymlink) {
  std::string target = TempPath("audit-target");
  std::string link = TempPath("audit-link");
  std::ofstream(target) << "";
  ::chmod(target.c_str(), 0600);
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  auto log = AuditLog::Open(link);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.error().Message().find("symbolic link"), std::string::npos) << log.error().Message();
  ::unlink(link.c_str());
  ::unlink(target.c_str());
}

TEST(AuditLog, RefusesAFileOthersCanRead) {
  std::string path = TempPath("audit-open");
  std::ofstream(path) << "";
  ::chmod(path.c_str(), 0644);
  auto log = AuditLog::Open(path);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.error().Message().find("chmod 600"), std::string::npos);
  ::unlink(path.c_str());
}

TEST(AuditEvents, CarryTheSchemaAndNoSecretValuesOrEnvValues) {
  LaunchPlan plan;
  plan.rule = "./policy.json rule 0";
  plan.reason = "untrusted";
  plan.server = "npx://x";
  plan.explain = {{"server", "npx://x"}, {"trust_facts", {{"kind", "npx"}}}, {"permissions", {{"read", {"/data"}}}}};
  plan.spec.argv = {"node", "x.js"};
  plan.spec.env = {{"API_TOKEN_ENV", "s3cr3t-value"}};
  plan.spec.secrets = {SecretSpec{"TOKEN", "/home/u/token", std::nullopt}};
  auto d = DecisionEvent(plan);
  EXPECT_EQ(d["event"], "decision");
  EXPECT_EQ(d["server"], "npx://x");
  EXPECT_EQ(d["rule"], "./policy.json rule 0");
  EXPECT_EQ(d["action"], "isolate");
  EXPECT_EQ(d["trust_facts"]["kind"], "npx");
  auto l = LaunchEvent(plan, "cell-1", 42);
  EXPECT_EQ(l["event"], "launch");
  EXPECT_EQ(l["cell_id"], "cell-1");
  auto x = ExitEvent(plan, "cell-1", 0, 0, std::chrono::milliseconds(1500), 1234);
  EXPECT_EQ(x["duration_ms"], 1500);
  EXPECT_EQ(x["peak_memory_bytes"], 1234);
  for (const auto& e : {d, l, x}) {
    EXPECT_TRUE(e.contains("ts"));
    EXPECT_EQ(e.dump().find("s3cr3t-value"), std::string::npos) << e.dump();
  }
}

}  // namespace
}  // namespace mcpcell
