// EgressAudit's bounds (issue 10 item 8): a cell decides how many attempts it
// makes, so the audit log it can cause must not grow with them. The floods
// here are the review's: 47,000 denied connects, and denials carrying
// 60,000-byte names. Time is passed in, so no test depends on a clock.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
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

}  // namespace
}  // namespace mcpcell
