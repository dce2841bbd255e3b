#pragma once
// The secret scan of a run's stderr as the copy runs it (stderr_log.cc's
// CopyScan: the default policy, reads of at most 64 KiB), for the tests that
// attack it with a server's output (adv6_stderr_scan_test, adv9_secret_leaks_test,
// adv12_secret_leaks_test).

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cell/stderr_redact.h"
#include "guard/secret_guard.h"
#include "secret_samples.h"

namespace mcpcell::test {

/// The built-in rules with the default policy; `guard` is null (and the
/// test has failed) when they do not load.
struct DefaultScan {
  DefaultScan() {
    auto g = SecretGuard::Create(SecretPolicy{});
    if (!g.ok()) {
      ADD_FAILURE() << g.error().Message();
      return;
    }
    guard = std::move(*g);
  }
  StderrRedactor Redactor() {
    return StderrRedactor([this](std::string_view line, std::vector<std::string>* rules) {
      return guard->RedactText(line, rules);
    });
  }
  std::unique_ptr<SecretGuard> guard;
};

/// What the copy passes on for `bytes` read from the pipe in reads of at most
/// 64 KiB (stderr_log.cc's kChunk, a pipe's default capacity), then the end.
inline std::string ThroughCopy(StderrRedactor& r, const std::string& bytes) {
  std::string out;
  for (std::size_t at = 0; at < bytes.size(); at += 64 * 1024) out += r.Feed(std::string_view(bytes).substr(at, 64 * 1024));
  return out + r.Flush();
}

/// A token of template `tmpl` (secret_samples.h), the same for the same seed.
inline std::string Token(const char* tmpl, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  return Expand(tmpl, rng);
}

}  // namespace mcpcell::test
