// The audit log's hash chain and `mcpcell audit verify`'s checks: the tamper
// battery (edited, deleted, inserted, reordered, truncated, spliced) and the
// runs that must not raise a false alarm (restarts, 4 concurrent writers).
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "audit/audit_verify.h"
#include "forked_child.h"
#include "temp_dir.h"

namespace mcpcell {
namespace {

// The logs of this run, in one directory removed when the binary exits.
std::string TempPath(const std::string& name) {
  static const testing::TempDir dir("audit-chain-test");
  std::string p = dir.File("chain-" + name);
  ::unlink(p.c_str());
  return p;
}

void WriteRecords(const std::string& path, int n, const std::string& tag = "t") {
  auto log = AuditLog::Open(path);
  ASSERT_TRUE(log.ok()) << log.error().Message();
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(log->Write({{"event", "tool_call"}, {"server", "s"}, {"tool", tag + std::to_string(i)}}).ok());
  }
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

void Store(const std::string& path, const std::vector<std::string>& lines, bool final_newline = true) {
  std::ofstream out(path, std::ios::trunc);
  for (std::size_t i = 0; i < lines.size(); ++i) out << lines[i] << (i + 1 < lines.size() || final_newline ? "\n" : "");
}

ChainReport Verify(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return VerifyChain(in);
}

TEST(AuditChain, AFreshLogVerifies) {
  std::string p = TempPath("fresh");
  WriteRecords(p, 5);
  ChainReport r = Verify(p);
  EXPECT_TRUE(r.ok) << r.line << ": " << r.problem;
  EXPECT_EQ(r.records, 5u);
  EXPECT_EQ(r.runs, 1u);
  auto first = nlohmann::json::parse(Lines(p)[0]);
  EXPECT_EQ(first["seq"], 0);
  EXPECT_EQ(first["prev"], std::string(64, '0'));
}

TEST(AuditChain, RestartsContinueTheChain) {
  std::string p = TempPath("restart");
  WriteRecords(p, 3);
  WriteRecords(p, 3);
  WriteRecords(p, 2);
  ChainReport r = Verify(p);
  EXPECT_TRUE(r.ok) << r.line << ": " << r.problem;
  EXPECT_EQ(r.records, 8u);
  EXPECT_EQ(r.runs, 3u);
}

TEST(AuditChain, FourConcurrentWritersRaiseNoFalseAlarm) {
  std::string p = TempPath("concurrent");
  WriteRecords(p, 1);  // create it 0600 first
  std::vector<pid_t> kids;
  for (int k = 0; k < 4; ++k) {
    pid_t pid = ::fork();
    if (pid == 0) {
      auto log = AuditLog::Open(p);
      if (!log) ::_exit(1);
      for (int i = 0; i < 200; ++i) {
        if (!log->Write({{"event", "tool_call"}, {"server", "w" + std::to_string(k)}, {"i", i}}).ok()) ::_exit(2);
      }
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  ChainReport r = Verify(p);
  EXPECT_TRUE(r.ok) << r.line << ": " << r.problem;
  EXPECT_EQ(r.records, 801u);
  EXPECT_EQ(r.runs, 5u);
}

class Tampered : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = TempPath(::testing::UnitTest::GetInstance()->current_test_info()->name());
    WriteRecords(path_, 3, "a");
    WriteRecords(path_, 3, "b");
    lines_ = Lines(path_);
    ASSERT_EQ(lines_.size(), 6u);
  }
  void ExpectBrokenAt(std::uint64_t line, const std::string& words) {
    ChainReport r = Verify(path_);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.line, line) << r.problem;
    EXPECT_NE(r.problem.find(words), std::string::npos) << r.problem;
  }
  std::string path_;
  std::vector<std::string> lines_;
};

TEST_F(Tampered, AnEditedRecordIsAHashMismatch) {
  // The tool's value, not the first "b0" on the line: that may lie in a
  // random run id or a hash, and an edited hash is another finding.
  auto at = lines_[3].find("\"tool\":\"b0\"");
  ASSERT_NE(at, std::string::npos) << lines_[3];
  lines_[3].replace(at + 8, 2, "zz");
  Store(path_, lines_);
  ExpectBrokenAt(4, "record hash mismatch (edited?)");
}

TEST_F(Tampered, AnEditedHashBreaksTheNextLink) {
  auto j = nlohmann::json::parse(lines_[1]);
  std::string hash = j["hash"];
  std::string forged = hash;
  forged[0] = forged[0] == 'a' ? 'b' : 'a';
  lines_[1].replace(lines_[1].find(hash), 64, forged);
  Store(path_, lines_);
  ExpectBrokenAt(2, "record hash mismatch");
}

TEST_F(Tampered, ADeletedRecordIsFound) {
  lines_.erase(lines_.begin() + 2);
  Store(path_, lines_);
  ExpectBrokenAt(3, "previous-hash mismatch");
}

TEST_F(Tampered, ADeletedFirstRecordIsFound) {
  lines_.erase(lines_.begin());
  Store(path_, lines_);
  ExpectBrokenAt(1, "the chain does not start here");
}

TEST_F(Tampered, AnInsertedCopyIsFound) {
  lines_.insert(lines_.begin() + 2, lines_[1]);
  Store(path_, lines_);
  ExpectBrokenAt(3, "previous-hash mismatch");
}

TEST_F(Tampered, ReorderedRecordsAreFound) {
  std::swap(lines_[2], lines_[3]);
  Store(path_, lines_);
  ExpectBrokenAt(3, "previous-hash mismatch");
}

TEST_F(Tampered, ATruncatedTailIsFound) {
  lines_.back().resize(lines_.back().size() / 2);
  Store(path_, lines_, false);
  ExpectBrokenAt(6, "incomplete last record");
}

TEST_F(Tampered, ARecordSplicedFromAnotherLogIsFound) {
  std::string other = TempPath("other");
  WriteRecords(other, 3, "x");
  auto foreign = Lines(other);
  lines_.insert(lines_.begin() + 4, foreign[1]);
  Store(path_, lines_);
  ExpectBrokenAt(5, "previous-hash mismatch");
}

TEST_F(Tampered, AnotherLogsWholeHeadSplicedInIsFound) {
  std::string other = TempPath("otherhead");
  WriteRecords(other, 2, "x");
  auto foreign = Lines(other);
  lines_.insert(lines_.begin() + 3, foreign.begin(), foreign.end());
  Store(path_, lines_);
  ExpectBrokenAt(4, "previous-hash mismatch");
}

TEST_F(Tampered, AnUnchainedLineIsFound) {
  lines_.insert(lines_.begin() + 1, R"({"event":"tool_call","server":"s"})");
  Store(path_, lines_);
  ExpectBrokenAt(2, "no hash chain");
}

TEST_F(Tampered, AppendingAfterATruncatedTailKeepsTheDamageVisible) {
  lines_.back().resize(lines_.back().size() / 2);
  Store(path_, lines_, false);
  WriteRecords(path_, 1, "c");  // the writer starts a new line; the cut record stays broken
  ExpectBrokenAt(6, "not a JSON record");
}

TEST(AuditChain, AnEmptyLogVerifies) {
  std::string p = TempPath("empty");
  Store(p, {}, false);
  ChainReport r = Verify(p);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.records, 0u);
}

// Write failures are errors the relay acts on (it refuses calls from then on),
// and a failed write leaves no torn record: the chain still verifies.

TEST(AuditWriteFailure, AFileSizeLimitHitMidRecordFailsAndLeavesNoTornLine) {
  std::string path = TempPath("efbig");
  WriteRecords(path, 2);
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  // RLIMIT_FSIZE (setrlimit(2)): a write past the limit takes what fits, then
  // fails with EFBIG, the way a filling disk takes a few blocks and then ENOSPC.
  auto child = testing::RunInChild([&]() -> std::string {
    std::signal(SIGXFSZ, SIG_IGN);
    auto log = AuditLog::Open(path);
    if (!log.ok()) return log.error().Message();
    rlimit lim{static_cast<rlim_t>(before.st_size + 100), RLIM_INFINITY};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return "setrlimit failed";
    Status w = log->Write({{"event", "tool_call"}, {"server", "s"}, {"tool", std::string(4096, 'x')}});
    if (w.ok()) return "a write past RLIMIT_FSIZE succeeded";
    if (w.error().Message().find("File too large") == std::string::npos) return "unexpected: " + w.error().Message();
    return "";
  });
  ASSERT_TRUE(child.exited_ok()) << child.report;
  EXPECT_EQ(child.report, "");
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_size, before.st_size) << "the torn part of the record was cut off";
  WriteRecords(path, 1, "after");  // room again: the chain goes on
  ChainReport r = Verify(path);
  EXPECT_TRUE(r.ok) << r.line << ": " << r.problem;
  EXPECT_EQ(r.records, 3u);
  ::unlink(path.c_str());
}

TEST(AuditWriteFailure, ARemovedLogIsAnError) {
  std::string path = TempPath("removed");
  auto log = AuditLog::Open(path);
  ASSERT_TRUE(log.ok()) << log.error().Message();
  ASSERT_TRUE(log->Write({{"event", "tool_call"}, {"server", "s"}}).ok());
  ASSERT_EQ(::unlink(path.c_str()), 0);
  Status w = log->Write({{"event", "tool_call"}, {"server", "s"}});
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().Message().find("removed"), std::string::npos) << w.error().Message();
}

TEST(AuditWriteFailure, ALogRenamedAwayOrReplacedIsAnError) {
  std::string path = TempPath("replaced");
  auto log = AuditLog::Open(path);
  ASSERT_TRUE(log.ok()) << log.error().Message();
  ASSERT_EQ(::rename(path.c_str(), (path + ".1").c_str()), 0);
  Status gone = log->Write({{"event", "tool_call"}, {"server", "s"}});
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().Message().find("no longer names"), std::string::npos) << gone.error().Message();
  WriteRecords(path, 1, "other");  // another file at the path (a rotation)
  Status replaced = log->Write({{"event", "tool_call"}, {"server", "s"}});
  ASSERT_FALSE(replaced.ok());
  EXPECT_NE(replaced.error().Message().find("another file was put at the path"), std::string::npos)
      << replaced.error().Message();
  EXPECT_EQ(Lines(path + ".1").size(), 0u);
  ::unlink(path.c_str());
  ::unlink((path + ".1").c_str());
}

}  // namespace
}  // namespace mcpcell
