#include "util/masked_echo.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "util/unique_fd.h"

namespace mcpcell {
namespace {

/// What MaskedEcho writes, fed in `pieces`.
std::string Echoed(const std::vector<std::string>& masked, const std::vector<std::string>& pieces) {
  // A memfd, not a pipe: a long line would fill a pipe nobody reads yet.
  UniqueFd fd(::memfd_create("echo", MFD_CLOEXEC));
  EXPECT_TRUE(fd);
  {
    MaskedEcho echo(fd.get(), masked);
    for (const auto& piece : pieces) echo.Add(piece);
  }
  std::string out;
  char buf[65536];
  for (ssize_t r; (r = ::pread(fd.get(), buf, sizeof buf, static_cast<off_t>(out.size()))) > 0;) {
    out.append(buf, static_cast<size_t>(r));
  }
  return out;
}

TEST(MaskedEcho, ATokenCutAcrossReadsIsStillMasked) {
  const std::string token = "Fq8abcDEF123ghiJKL456mn";
  std::string line = "npm error FetchError: request to http://127.0.0.1:9/" + token + "/acme/pkg failed\n";
  for (size_t cut = 1; cut < line.size(); cut += 7) {
    std::string out = Echoed({token}, {line.substr(0, cut), line.substr(cut)});
    EXPECT_EQ(out.find(token), std::string::npos) << cut;
    EXPECT_NE(out.find("http://127.0.0.1:9/[masked]/acme/pkg failed\n"), std::string::npos) << out;
  }
}

TEST(MaskedEcho, TheLastLineWithNoNewlineIsWrittenAtTheEnd) {
  EXPECT_EQ(Echoed({"secret"}, {"a secret\nand another secret"}), "a [masked]\nand another [masked]");
  EXPECT_EQ(Echoed({}, {"plain"}), "plain");
}

TEST(MaskedEcho, ALongLineIsWrittenInPiecesThatNeverCutAToken) {
  const std::string token(40, 'T');
  std::string line(200 * 1024, 'x');
  for (size_t at = 1000; at + token.size() < line.size(); at += 10007) line.replace(at, token.size(), token);
  std::vector<std::string> pieces;
  for (size_t at = 0; at < line.size(); at += 4093) pieces.push_back(line.substr(at, 4093));
  std::string out = Echoed({token}, pieces);
  EXPECT_EQ(out.find(token.substr(0, 20)), std::string::npos);
  EXPECT_NE(out.find("[masked]"), std::string::npos);
}

TEST(MaskedEcho, LongerStringsFirst) {
  EXPECT_EQ(MaskedEcho::Masked("/abc/abcdef/", {"abc", "abcdef"}), "/[masked]/[masked]/");
  EXPECT_EQ(MaskedEcho::Masked("aaaa", {"aa", ""}), "[masked][masked]");
}

}  // namespace
}  // namespace mcpcell
