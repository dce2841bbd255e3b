// EgressAudit's bounds (issue 10 item 8): a cell decides how many attempts it
// makes, so the audit log it can cause must not grow with them. The floods
// here are the review's: 47,000 denied connects, and denials carrying
// 60,000-byte names. Time is passed in, so no test depends on a clock.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "audit/audit_verify.h"
#include "egress/egress_audit.h"

namespace mcpcell {
namespace {

using nlohmann::json;
using Clock = EgressAudit::Clock;

/// Sends stderr to /dev/null while alive (denials are told there once per host).
class QuietStderr {
 public:
  QuietStderr() : saved_(::dup(2)) {
    std::fflush(stderr);
    int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    ::dup2(null, 2);
    ::close(null);
  }
  ~QuietStderr() {
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
  }

 private:
  int saved_;
};

class EgressAuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/mcpcell-egress-audit-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    path_ = dir_ + "/audit.jsonl";
    auto log = AuditLog::Open(path_);
    ASSERT_TRUE(log.ok()) << log.error().Message();
    log_.emplace(std::move(*log));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<json> Events(const std::string& kind) const {
    std::vector<json> out;
    std::ifstream in(path_);
    for (std::string line; std::getline(in, line);) {
      auto j = json::parse(line);
      if (j.value("event", "") == kind) out.push_back(j);
    }
    return out;
  }

  std::uintmax_t Bytes() const { return std::filesystem::file_size(path_); }

  static EgressAttempt Denied(std::string host, std::uint16_t port) {
    EgressAttempt a;
    a.via = "connect";
    a.host = std::move(host);
    a.port = port;
    a.rule = "no allow_host entry matches \"" + a.host + "\"";
    a.how_to_allow = "add \"" + a.host + "\" to network.outbound.allow_host";
    return a;
  }

  std::string dir_, path_;
  std::optional<AuditLog> log_;
};

TEST_F(EgressAuditTest, FortySevenThousandIdenticalDenialsWriteOneLineAndASummaryThatCountsThem) {
  constexpr std::uint64_t kAttempts = 47000;
  auto t0 = Clock::now();
  {
    QuietStderr quiet;
    EgressAudit audit(&*log_, "flood");
    // All within 4 s, as in the review; well inside the 5 s window.
    for (std::uint64_t i = 0; i < kAttempts; ++i) {
      audit.Record(Denied("evil.example", 443), t0 + std::chrono::microseconds(i * 80));
    }
  }
  auto lines = Events("egress");
  ASSERT_EQ(lines.size(), 1u);
  auto summaries = Events("egress_summary");
  ASSERT_EQ(summaries.size(), 1u);
  const json& s = summaries[0];
  EXPECT_EQ(s["server"], "flood");
  EXPECT_EQ(s["lines"], 1);
  EXPECT_EQ(s["repeats_total"], kAttempts - 1);
  ASSERT_EQ(s["repeats"].size(), 1u);
  EXPECT_EQ(s["repeats"][0]["host"], "evil.example");
  EXPECT_EQ(s["repeats"][0]["port"], 443);
  EXPECT_EQ(s["repeats"][0]["count"], kAttempts - 1);
  EXPECT_LT(Bytes(), 4096u);
}

TEST_F(EgressAuditTest, RepeatsAfterTheWindowAreLoggedAgainWithTheirCount) {
  auto t0 = Clock::now();
  {
    QuietStderr quiet;
    EgressAudit audit(&*log_, "window");
    for (int i = 0; i < 10; ++i) audit.Record(Denied("evil.example", 443), t0 + std::chrono::milliseconds(i));
    audit.Record(Denied("evil.example", 443), t0 + std::chrono::seconds(6));
    audit.Record(Denied("evil.example", 80), t0 + std::chrono::seconds(6));  // another port: its own line
  }
  auto lines = Events("egress");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_FALSE(lines[0].contains("repeats"));
  EXPECT_EQ(lines[1]["repeats"], 9);
  EXPECT_FALSE(lines[2].contains("repeats"));
  // Nothing pending at the end: counted on a line, the total still in the summary.
  auto s = Events("egress_summary");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0]["repeats_total"], 9);
  EXPECT_EQ(s[0]["repeats"].size(), 0u);
}

TEST_F(EgressAuditTest, DistinctDenialsPassTheTokenBucketAndTheRestIsAccountedFor) {
  // 60,000-byte names, each another one (as the review sent): every field is
  // capped and the bucket bounds the number of lines.
  constexpr std::uint64_t kAttempts = 5000;
  EgressAudit::Limits limits;
  limits.bucket.burst = 100;
  limits.bucket.per_second = 10;
  auto t0 = Clock::now();
  {
    QuietStderr quiet;
    EgressAudit audit(&*log_, "names", limits);
    for (std::uint64_t i = 0; i < kAttempts; ++i) {
      std::string name = std::to_string(i) + std::string(60000, 'a');
      audit.Record(Denied(name, 443), t0 + std::chrono::milliseconds(i));  // 5 s in all
    }
  }
  auto lines = Events("egress");
  auto s = Events("egress_summary");
  ASSERT_EQ(s.size(), 1u);
  // Burst plus 5 s of refill, give or take the one in flight.
  EXPECT_LE(lines.size(), 100u + 5 * 10 + 1);
  EXPECT_GE(lines.size(), 100u);
  std::uint64_t held_on_lines = 0;
  for (const auto& e : lines) {
    held_on_lines += e.value("held_back", 0ull);
    EXPECT_LE(e["host"].get<std::string>().size(), 320u) << "host not capped";
    EXPECT_NE(e["host"].get<std::string>().find("more bytes)"), std::string::npos);
    EXPECT_LE(e["rule"].get<std::string>().size(), EgressAudit::kMaxText + 32);
    EXPECT_LE(e.dump().size(), 4096u);
  }
  EXPECT_EQ(s[0]["lines"], lines.size());
  EXPECT_EQ(held_on_lines + s[0]["held_back"].get<std::uint64_t>(), s[0]["held_back_total"].get<std::uint64_t>());
  EXPECT_EQ(lines.size() + s[0]["held_back_total"].get<std::uint64_t>() + s[0]["repeats_total"].get<std::uint64_t>(),
            kAttempts);
  // The bound is on lines x capped line size, not on what the cell sent (300 MB here).
  EXPECT_LT(Bytes(), (100u + 5 * 10 + 2) * 4096u);
}

TEST_F(EgressAuditTest, NothingHeldBackMeansNoSummary) {
  {
    EgressAudit audit(&*log_, "quiet");
    EgressAttempt ok;
    ok.via = "connect";
    ok.host = "allowed.test";
    ok.port = 443;
    ok.allowed = true;
    ok.rule = "allow_host \"allowed.test\"";
    audit.Record(ok);
    audit.Record(ok);  // allowed attempts are never coalesced: each has its own bytes and duration
  }
  EXPECT_EQ(Events("egress").size(), 2u);
  EXPECT_EQ(Events("egress_summary").size(), 0u);
}

// ---- fail closed (docs/AUDIT.md, "Why refused until restart") ------------

EgressAttempt Allowed(std::string host) {
  EgressAttempt a;
  a.via = "connect";
  a.host = std::move(host);
  a.port = 443;
  a.allowed = true;
  a.rule = "allow_host \"" + a.host + "\"";
  return a;
}

// The log renamed away (someone else touched it): the write fails, and from
// then on every attempt is refused naming the log's problem — still after
// the file is back, until mcpcell starts again. The first failure is said on
// stderr once; each refused host once more, with the reason.
TEST_F(EgressAuditTest, AFailedWriteRefusesEveryLaterAttemptEvenOnceTheLogIsBack) {
  EgressAudit audit(&*log_, "closed");
  audit.Record(Allowed("before.test"));
  EgressAttempt probe = Allowed("before.test");
  EXPECT_FALSE(audit.RefuseIfBroken(probe));
  EXPECT_TRUE(probe.allowed);

  std::string moved = dir_ + "/moved.jsonl";
  ASSERT_EQ(::rename(path_.c_str(), moved.c_str()), 0);
  ::testing::internal::CaptureStderr();
  audit.Record(Allowed("lost.test"));  // its record cannot be written
  audit.Record(Allowed("lost-too.test"));
  ASSERT_EQ(::rename(moved.c_str(), path_.c_str()), 0);  // the log is back
  std::vector<std::string> rules;
  for (const char* host : {"after.test", "other.test", "after.test"}) {
    EgressAttempt a = Allowed(host);
    ASSERT_TRUE(audit.RefuseIfBroken(a)) << host << " was let through after the audit failed";
    EXPECT_FALSE(a.allowed);
    rules.push_back(a.rule);
    EXPECT_NE(a.rule.find("the audit log cannot be written"), std::string::npos) << a.rule;
    EXPECT_NE(a.rule.find(path_), std::string::npos) << "the rule names the log: " << a.rule;
    EXPECT_NE(a.how_to_allow.find("start mcpcell again"), std::string::npos) << a.how_to_allow;
    audit.Record(a);  // written: the log has recovered
  }
  std::string err = ::testing::internal::GetCapturedStderr();
  auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = err.find(what); at != std::string::npos; at = err.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("egress: the audit log cannot be written"), 1u) << err;
  EXPECT_EQ(count("every new connection and DNS lookup of the cell is refused"), 1u) << err;
  EXPECT_EQ(count("egress denied: after.test:443 (the audit log cannot be written"), 1u) << err;
  EXPECT_EQ(count("egress denied: other.test:443 (the audit log cannot be written"), 1u) << err;

  auto events = Events("egress");
  // before.test, then two refusals (the third repeats the first and is
  // counted; lost.test's records are lost).
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["host"], "before.test");
  for (std::size_t i = 1; i < events.size(); ++i) {
    EXPECT_EQ(events[i]["allowed"], false);
    EXPECT_EQ(events[i]["rule"], rules[i - 1]);
  }
  std::ifstream in(path_);
  ChainReport chain = VerifyChain(in);
  EXPECT_TRUE(chain.ok) << chain.problem;
}

// A write(2) that really fails: over the file size limit (RLIMIT_FSIZE,
// setrlimit(2)) it fails with EFBIG, as on a full filesystem with ENOSPC. In
// a child, so the limit and SIGXFSZ's disposition stay there; it reports by
// exit code, and its stderr goes to a file the test reads.
TEST_F(EgressAuditTest, AWriteOverTheFileSizeLimitRefusesWhatFollows) {
  std::string err_path = dir_ + "/stderr";
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ::dup2(err, 2);
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit lim{1000, 1000};  // one record fits, a few do not
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(10);
    EgressAudit audit(&*log_, "fsize");
    audit.Record(Allowed("first.test"));
    if (audit.Broken()) ::_exit(11);
    for (int i = 0; i < 20 && !audit.Broken(); ++i) audit.Record(Allowed("more.test"));
    EgressAttempt a = Allowed("after.test");
    if (!audit.RefuseIfBroken(a)) ::_exit(12);
    if (a.allowed || a.rule.find("File too large") == std::string::npos) ::_exit(13);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10 setrlimit, 11 the first record failed, 12 not refused after the "
                                       "failure, 13 the refusal does not name EFBIG";
  std::string err;
  std::ifstream e(err_path);
  for (std::string line; std::getline(e, line);) err += line + "\n";
  EXPECT_NE(err.find("egress: the audit log cannot be written ("), std::string::npos) << err;
  EXPECT_NE(err.find("File too large"), std::string::npos) << err;
  // What was written is whole: a partly written record was cut off again.
  std::ifstream in(path_);
  ChainReport chain = VerifyChain(in);
  EXPECT_TRUE(chain.ok) << chain.problem;
  EXPECT_GE(Events("egress").size(), 1u);
}

}  // namespace
}  // namespace mcpcell
