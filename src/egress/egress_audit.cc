#include "egress/egress_audit.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "egress/dns_name.h"
#include "util/diag.h"

namespace mcpcell {

std::string EgressAudit::DenialSentence(const EgressAttempt& a) {
  // An IPv6 literal is bracketed so its port stays readable: [::1]:80.
  bool v6 = a.host.find(':') != std::string::npos;
  std::string target = a.via == "dns" ? fmt::format("DNS name {} ({})", a.host, a.dns_type)
                       : v6           ? fmt::format("[{}]:{}", a.host, a.port)
                                      : fmt::format("{}:{}", a.host, a.port);
  std::string s = fmt::format("egress denied: {} ({})", target, a.rule);
  if (!a.how_to_allow.empty()) s += "; to allow it, " + a.how_to_allow;
  return s;
}

nlohmann::json EgressAudit::ToJson(const EgressAttempt& a) const {
  nlohmann::json j{{"event", "egress"},  {"server", server_},   {"via", a.via},
                   {"host", a.host},     {"port", a.port},     {"address", a.address},
                   {"allowed", a.allowed}, {"rule", a.rule},   {"bytes_out", a.bytes_out},
                   {"bytes_in", a.bytes_in}, {"duration_ms", a.duration.count()}};
  if (!a.how_to_allow.empty()) j["how_to_allow"] = a.how_to_allow;
  if (!a.error.empty()) j["error"] = a.error;
  if (!a.dns_type.empty()) j["dns_type"] = a.dns_type;
  return j;
}

namespace {

// The start of the rule of an attempt refused because the log cannot be written.
constexpr std::string_view kAuditBroken = "the audit log cannot be written";

// DNS denials are told per parent domain (the last two labels): an
// exfiltration attempt asks for thousands of random names under one domain,
// and stderr should say so once, not once per name.
std::string StderrKey(const EgressAttempt& a) {
  // A host denied by a rule before the log failed is told again, now that
  // the reason is the log.
  if (a.rule.starts_with(kAuditBroken)) return "audit\n" + a.host;
  if (a.via != "dns") return a.host;
  std::size_t last = a.host.rfind('.');
  if (last == std::string::npos || last == 0) return a.host;
  std::size_t prev = a.host.rfind('.', last - 1);
  return prev == std::string::npos ? a.host : "*" + a.host.substr(prev);
}

// After this many distinct denials stderr says it stops repeating them;
// the audit log accounts for every attempt.
constexpr std::size_t kMaxToldHosts = 20;

// Past this many remembered denials, forget those outside the window; their
// pending counts move to repeats_unlisted in the summary.
constexpr std::size_t kMaxRepeatKeys = 1024;
// The summary lists at most this many pending repeats one by one.
constexpr std::size_t kMaxListedRepeats = 100;
// A host as PrintableBytes writes it at most: 253 bytes, one escape, the marker.
constexpr std::size_t kMaxHost = 253 + 3 + 32;

std::string Cap(std::string s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t cut = s.size() - max;
  s.resize(max);
  return s + fmt::format("...({} more bytes)", cut);
}

std::string RepeatKey(const EgressAttempt& a) {
  return fmt::format("{}\n{}\n{}\n{}\n{}", a.via, a.host, a.port, a.dns_type, a.rule);
}

}  // namespace

EgressAttempt EgressAudit::Capped(EgressAttempt a) {
  // A valid name is at most 253 bytes (dns_name.h); an invalid one arrives
  // escaped and cut by PrintableBytes (253 bytes, an escape, the marker).
  a.host = Cap(std::move(a.host), kMaxHost);
  a.rule = Cap(std::move(a.rule), kMaxText);
  a.how_to_allow = Cap(std::move(a.how_to_allow), kMaxText);
  a.error = Cap(std::move(a.error), kMaxText);
  a.via = Cap(std::move(a.via), 16);
  a.dns_type = Cap(std::move(a.dns_type), 16);
  a.address = Cap(std::move(a.address), 64);
  return a;
}

bool EgressAudit::CoalesceRepeat(const EgressAttempt& a, Clock::time_point now, std::uint64_t* repeats_before) {
  auto it = repeats_.find(RepeatKey(a));
  if (it == repeats_.end()) return false;
  if (now - it->second.logged_at < limits_.repeat_window) {
    ++it->second.pending;
    return true;
  }
  *repeats_before = it->second.pending;  // reported on the line about to be written
  repeats_.erase(it);
  return false;
}

void EgressAudit::Record(const EgressAttempt& raw, Clock::time_point now) {
  if (log_ == nullptr && raw.allowed) return;  // nothing to say and nowhere to write it
  EgressAttempt a = Capped(raw);
  if (!a.allowed) TellOnStderr(a);
  if (log_ == nullptr) return;
  nlohmann::json line;
  {
    std::lock_guard lock(mu_);
    std::uint64_t repeats = 0;
    if (!a.allowed && CoalesceRepeat(a, now, &repeats)) {
      ++repeats_total_;
      return;
    }
    std::uint64_t held = 0;
    if (!gate_.Admit(now, &held)) {
      ++held_back_total_;
      // Repeats already counted for a line that is not written now stay in
      // the totals; the summary says so.
      return;
    }
    line = ToJson(a);
    if (repeats > 0) line["repeats"] = repeats;
    if (held > 0) line["held_back"] = held;
    ++lines_;
    if (!a.allowed) {
      if (repeats_.size() >= kMaxRepeatKeys) PruneRepeats(now);
      repeats_[RepeatKey(a)] = Repeat{now, 0, a};
    }
  }
  Write(line);
}

void EgressAudit::PruneRepeats(Clock::time_point now) {
  std::erase_if(repeats_, [&](const auto& kv) {
    if (now - kv.second.logged_at < limits_.repeat_window) return false;
    repeats_unlisted_ += kv.second.pending;
    return true;
  });
}

EgressAudit::~EgressAudit() {
  if (log_ == nullptr) return;
  nlohmann::json listed = nlohmann::json::array();
  std::uint64_t unlisted = repeats_unlisted_;
  for (const auto& [key, r] : repeats_) {
    if (r.pending == 0) continue;
    if (listed.size() >= kMaxListedRepeats) {
      unlisted += r.pending;
      continue;
    }
    nlohmann::json one{{"via", r.attempt.via}, {"host", r.attempt.host}, {"port", r.attempt.port},
                       {"rule", r.attempt.rule}, {"count", r.pending}};
    if (!r.attempt.dns_type.empty()) one["dns_type"] = r.attempt.dns_type;
    listed.push_back(std::move(one));
  }
  if (held_back_total_ == 0 && repeats_total_ == 0) return;
  nlohmann::json summary{{"event", "egress_summary"},
                         {"server", server_},
                         {"lines", lines_},
                         {"held_back", gate_.TakeHeldBack()},
                         {"held_back_total", held_back_total_},
                         {"repeats", listed},
                         {"repeats_unlisted", unlisted},
                         {"repeats_total", repeats_total_}};
  Write(summary);
}

// The first failure is said once, with what follows from it; later ones
// add nothing (each refusal names the problem on its own).
void EgressAudit::Write(const nlohmann::json& event) {
  auto ok = log_->Write(event);
  if (ok) return;
  {
    std::lock_guard lock(mu_);
    if (!failure_.empty()) return;
    failure_ = ok.error().Message();
    failed_.store(true, std::memory_order_release);
  }
  Say("egress: the audit log cannot be written (" + ok.error().Message() +
      "); from now on every new connection and DNS lookup of the cell is refused. Fix the log's file or "
      "filesystem and start mcpcell again");
}

bool EgressAudit::RefuseIfBroken(EgressAttempt& a) {
  if (!failed_.load(std::memory_order_acquire)) return false;
  std::lock_guard lock(mu_);
  a.allowed = false;
  a.rule = std::string(kAuditBroken) + " (" + failure_ + ")";
  a.how_to_allow = "nothing while this mcpcell runs: it opens no connection and answers no lookup it cannot "
                   "record; fix the log's file or filesystem and start mcpcell again";
  return true;
}

void EgressAudit::TellOnStderr(const EgressAttempt& a) {
  {
    std::lock_guard lock(mu_);
    if (told_.size() > kMaxToldHosts) return;
    if (!told_.insert(StderrKey(a)).second) return;
    if (told_.size() > kMaxToldHosts) {
      Say("more egress denials follow; only the audit log (--audit-log) lists them");
      return;
    }
  }
  Say(DenialSentence(a));
}

}  // namespace mcpcell
