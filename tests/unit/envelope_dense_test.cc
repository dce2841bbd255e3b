// The relay's memory bound on number-dense lines (src/relay/envelope.h
// DomBytesBound, EnvelopeParser): simdjson's DOM takes up to 13x a line of
// `0,0,0,…`, so a line whose DOM would outgrow kDomPerMaxMessage times the
// maximum message is refused before it is parsed, and the bound is checked
// against what a parse really makes resident.

#include <gtest/gtest.h>

#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <variant>

#include <simdjson.h>

#include "relay/envelope.h"
#include "relay/line_framer.h"

namespace mcpcell {
namespace {

// This process's resident set in bytes (proc(5), /proc/self/statm).
std::size_t RssBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long size = 0, resident = 0;
  int n = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  return n == 2 ? static_cast<std::size_t>(resident) * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

// `n` copies of `item` joined by commas inside a message, `id` written last as the SDKs do.
std::string Message(const std::string& item, std::size_t n, std::string_view id = "7") {
  std::string s = R"({"jsonrpc":"2.0","result":{"data":[)";
  s.reserve(s.size() + n * (item.size() + 1) + 64);
  for (std::size_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += item;
  }
  return s + "]},\"id\":" + std::string(id) + "}";
}

// Allocator granularity: the ASan build's allocator adds its own chunk
// header and redzone pages around the DOM (4-8 KiB over a 25 MB bound in the
// fresh-clone ASan run); a wrong bound misses by megabytes.
constexpr std::size_t kSlack = 256 * 1024;

// The bytes a fresh simdjson parse of `line` makes resident: its allocation
// is as large as the line, and only what it writes counts.
std::size_t ResidentParse(const std::string& line) {
  // Every allocation of a MiB or more from fresh pages (mallopt(3)): glibc's
  // dynamic threshold would otherwise serve the DOM from freed, still
  // resident heap, and the measure would read low.
  ::mallopt(M_MMAP_THRESHOLD, 1 << 20);
  simdjson::padded_string padded(line);
  simdjson::dom::parser parser;
  std::size_t before = RssBytes();
  auto doc = parser.parse(padded);
  std::size_t after = RssBytes();
  (void)doc;
  return after > before ? after - before : 0;
}

TEST(DomBytesBound, CoversWhatSimdjsonWritesForDenseShapes) {
  ResidentParse(Message("0", 1024));  // the library's code pages, faulted in by its first parse
  constexpr std::size_t kN = 2 * 1024 * 1024;
  for (const char* item : {"0", "\"\"", "[]", "{}", "[0]", "{\"a\":0}", "-1e9", "true", "0.5"}) {
    std::string line = Message(item, kN / (std::char_traits<char>::length(item) + 1));
    std::size_t bound = DomBytesBound(line);
    std::size_t resident = ResidentParse(line);
    EXPECT_GE(bound + kSlack, resident) << item << ": a " << line.size() << "-byte line";
    EXPECT_GT(resident, line.size()) << item << ": the DOM of a dense line is larger than the line";
  }
}

// simdjson's stage 1 takes FF and SUB for operators ((byte | 0x20) is ',' or
// ':'): a line of them fills its index (4 bytes a byte) before stage 2 fails.
TEST(DomBytesBound, CoversFormFeedAndSubWhichSimdjsonIndexes) {
  for (char c : {'\f', '\x1a'}) {
    std::string line = "{" + std::string(4u << 20, c);
    std::size_t resident = ResidentParse(line);
    EXPECT_GE(DomBytesBound(line) + kSlack, resident) << static_cast<int>(c);
    EXPECT_GT(resident, 3 * line.size()) << static_cast<int>(c) << ": the index holds an entry per byte";
  }
}

TEST(DomBytesBound, ANumberDenseLineCostsAboutTwelveTimesItsSize) {
  std::string line = Message("0", 1 << 20);
  std::size_t bound = DomBytesBound(line);
  EXPECT_GE(bound, 12 * line.size());
  EXPECT_LE(bound, 13 * line.size());
}

TEST(DomBytesBound, TextCostsAboutItsSize) {
  std::string text(8u << 20, 'a');
  for (std::size_t i = 0; i < text.size(); i += 7) text[i] = ',';  // commas inside a string are no tokens
  std::string line = R"({"jsonrpc":"2.0","method":"x","params":{"text":")" + text + "\"}}";
  EXPECT_LE(DomBytesBound(line), line.size() + 128 * 1024);
}

TEST(DomBytesBound, AnEscapedQuoteDoesNotEndAStringButAnEscapedBackslashDoes) {
  // "\",0,0" is one string; "\\" ends before ,0,0.
  std::string in_string = R"(["\",0,0,0,0,0,0,0,0"])";
  std::string after_string = R"(["\\",0,0,0,0,0,0,0,0])";
  EXPECT_LT(DomBytesBound(in_string), DomBytesBound(after_string));
  // An unterminated string runs to the end of the line (simdjson's stage 1 reads it so).
  EXPECT_LT(DomBytesBound(R"(["0,0,0,0,0,0,0,0,0,0)"), DomBytesBound("[0,0,0,0,0,0,0,0,0,0"));
}

class DenseParse : public ::testing::Test {
 protected:
  // LineFramer guarantees kPadding readable bytes after the line; so does this copy.
  std::variant<Envelope, Refusal> Parse(const std::string& line) {
    held_ = line + std::string(LineFramer::kPadding, ' ');
    return parser_.Parse(std::string_view(held_.data(), line.size()));
  }
  static constexpr std::size_t kMax = 1u << 20;
  EnvelopeParser parser_{kMax};
  std::string held_;
};

TEST_F(DenseParse, ALineOfNumbersUnderTheMaximumIsRefusedWithItsId) {
  std::string line = Message("0", kMax / 2 - 64);
  ASSERT_LE(line.size(), kMax);
  auto parsed = Parse(line);
  auto* r = std::get_if<Refusal>(&parsed);
  ASSERT_NE(r, nullptr) << "a " << line.size() << "-byte line of numbers parsed";
  EXPECT_EQ(r->code, kMessageTooLarge);
  EXPECT_EQ(r->id_json, "7");
  EXPECT_EQ(r->id_key, "n:7");
  EXPECT_NE(r->message.find("--max-message"), std::string::npos) << r->message;
  EXPECT_NE(r->message.find("4 times the maximum message size of 1048576 bytes"), std::string::npos) << r->message;
}

TEST_F(DenseParse, AStringIdIsKeptAndTwoIdsGiveNull) {
  auto parsed = Parse(Message("0", kMax / 2 - 64, R"("a-1")"));
  ASSERT_TRUE(std::holds_alternative<Refusal>(parsed));
  EXPECT_EQ(std::get<Refusal>(parsed).id_json, R"("a-1")");
  EXPECT_EQ(std::get<Refusal>(parsed).id_key, "s:a-1");
  // The peer takes the last of two ids: the relay cannot say which, so it answers null.
  std::string two = Message("0", kMax / 2 - 64, "7");
  two.insert(1, R"("id":8,)");
  parsed = Parse(two);
  ASSERT_TRUE(std::holds_alternative<Refusal>(parsed));
  EXPECT_EQ(std::get<Refusal>(parsed).id_json, "null");
}

TEST_F(DenseParse, TextAtTheMaximumAndFewerNumbersStillParse) {
  std::string text = R"({"jsonrpc":"2.0","method":"x","params":{"text":")" + std::string(kMax - 64, ',') + "\"}}";
  ASSERT_LE(text.size(), kMax);
  EXPECT_TRUE(std::holds_alternative<Envelope>(Parse(text)));
  // 4 MiB + 1 MiB of budget: a quarter of the maximum in numbers is ~3 MiB of DOM.
  auto parsed = Parse(Message("0", kMax / 8));
  ASSERT_TRUE(std::holds_alternative<Envelope>(parsed)) << std::get<Refusal>(parsed).message;
  EXPECT_EQ(std::get<Envelope>(parsed).kind, Envelope::Kind::kResponse);
}

}  // namespace
}  // namespace mcpcell
