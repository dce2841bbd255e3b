// AuditLog::WriteObject, the relay's way in (an event it dumped already): its
// records extend the same chain as Write's, across runs, and it refuses what
// Write refuses (a log removed or replaced) and text that is not one object.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "audit/audit_verify.h"
#include "temp_dir.h"

namespace mcpcell {
namespace {

std::string FreshPath(const std::string& name) {
  static const testing::TempDir dir("audit-write-object-test");
  std::string p = dir.File(name);
  ::unlink(p.c_str());
  return p;
}

ChainReport Verify(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return VerifyChain(in);
}

std::string LastLine(const std::string& path) {
  std::ifstream in(path);
  std::string last;
  for (std::string l; std::getline(in, l);) last = l;
  return last;
}

TEST(AuditWriteObject, ExtendsOneChainWithWriteAcrossRuns) {
  std::string p = FreshPath("mixed");
  for (int run = 0; run < 3; ++run) {
    auto log = AuditLog::Open(p);
    ASSERT_TRUE(log.ok()) << log.error().Message();
    ASSERT_TRUE(log->Write({{"event", "launch"}, {"server", "s"}}).ok());
    ASSERT_TRUE(log->WriteObject(R"({"event":"tool_call","id":1,"server":"s","tool":"t"})").ok());
    ASSERT_TRUE(log->WriteObject("{}").ok());
  }
  ChainReport r = Verify(p);
  EXPECT_TRUE(r.ok) << r.line << ": " << r.problem;
  EXPECT_EQ(r.records, 9u);
  EXPECT_EQ(r.runs, 3u);
  auto last = nlohmann::json::parse(LastLine(p));
  EXPECT_EQ(last["seq"], 8);
  EXPECT_TRUE(last["ts"].is_string());
  EXPECT_EQ(last.size(), 5u) << "ts, run, seq, prev, hash and nothing else";
}

TEST(AuditWriteObject, KeepsTheEventsMembersAndAppendsTheChainsWithTheHashLast) {
  std::string p = FreshPath("members");
  auto log = AuditLog::Open(p);
  ASSERT_TRUE(log.ok()) << log.error().Message();
  std::string object = R"({"arguments":{"ts":"theirs"},"event":"tool_call","server":"s"})";
  ASSERT_TRUE(log->WriteObject(object).ok());
  std::string line = LastLine(p);
  EXPECT_EQ(line.rfind(object.substr(0, object.size() - 1) + R"(,"ts":")", 0), 0u) << line;
  EXPECT_NE(line.find(R"(","run":")" + log->run_id() + R"(","seq":0,"prev":")"), std::string::npos) << line;
  std::string stated;
  auto own = ChainedRecordHash(line, &stated);
  ASSERT_TRUE(own.has_value()) << line;
  EXPECT_EQ(*own, stated);
}

// Write's copy path: the chain's members are the log's, an event's own "ts" is kept.
TEST(AuditWriteObject, WriteReplacesAnEventsChainMembers) {
  std::string p = FreshPath("forged");
  auto log = AuditLog::Open(p);
  ASSERT_TRUE(log.ok()) << log.error().Message();
  nlohmann::json event{{"event", "x"}, {"hash", "forged"}, {"seq", 99}, {"prev", "p"}, {"run", "r"}, {"ts", "mine"}};
  ASSERT_TRUE(log->Write(event).ok());
  ASSERT_TRUE(log->Write(event).ok());
  ChainReport r = Verify(p);
  EXPECT_TRUE(r.ok) << r.line << ": " << r.problem;
  auto last = nlohmann::json::parse(LastLine(p));
  EXPECT_EQ(last["seq"], 1);
  EXPECT_EQ(last["ts"], "mine");
  EXPECT_EQ(last["run"], log->run_id());
  EXPECT_EQ(event["seq"], 99) << "the caller's event is left as it was";
}

TEST(AuditWriteObject, RefusesTextThatIsNotOneObjectOnOneLine) {
  std::string p = FreshPath("shape");
  auto log = AuditLog::Open(p);
  ASSERT_TRUE(log.ok()) << log.error().Message();
  for (const char* bad : {"", "{", "[1]", R"({"a":1})"
                                              "\n"
                                              R"({"b":2})",
                          "{\"a\":\"x\ry\"}"}) {
    EXPECT_FALSE(log->WriteObject(bad).ok()) << bad;
  }
  EXPECT_EQ(LastLine(p), "");
}

TEST(AuditWriteObject, ARemovedOrReplacedLogIsRefused) {
  std::string p = FreshPath("replaced");
  auto log = AuditLog::Open(p);
  ASSERT_TRUE(log.ok()) << log.error().Message();
  ASSERT_TRUE(log->WriteObject(R"({"event":"tool_call"})").ok());
  ASSERT_EQ(::rename(p.c_str(), (p + ".1").c_str()), 0);
  Status gone = log->WriteObject(R"({"event":"tool_call"})");
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().Message().find("no longer names"), std::string::npos) << gone.error().Message();
  { std::ofstream other(p); }  // another file at the path (a rotation)
  Status replaced = log->WriteObject(R"({"event":"tool_call"})");
  ASSERT_FALSE(replaced.ok());
  EXPECT_NE(replaced.error().Message().find("another file was put at the path"), std::string::npos)
      << replaced.error().Message();
  ASSERT_EQ(::unlink(p.c_str()), 0);
  ASSERT_EQ(::unlink((p + ".1").c_str()), 0);
  Status removed = log->WriteObject(R"({"event":"tool_call"})");
  ASSERT_FALSE(removed.ok());
  EXPECT_NE(removed.error().Message().find("removed"), std::string::npos) << removed.error().Message();
}

}  // namespace
}  // namespace mcpcell
