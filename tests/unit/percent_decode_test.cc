#include "util/percent_decode.h"

#include <gtest/gtest.h>

namespace mcpcell {
namespace {

TEST(PercentDecoded, DecodesEachEscapeInEitherCase) {
  EXPECT_EQ(PercentDecoded("/tmp/a%20b"), "/tmp/a b");
  EXPECT_EQ(PercentDecoded("%2f%2F"), "//");
  EXPECT_EQ(PercentDecoded("%41%42c"), "ABc");
  EXPECT_EQ(PercentDecoded("tok%2Bx%3D"), "tok+x=");
  EXPECT_EQ(PercentDecoded("%00"), std::string(1, '\0'));
  EXPECT_EQ(PercentDecoded("%ff"), std::string(1, '\xff'));
}

TEST(PercentDecoded, LeavesAPercentWithoutTwoHexDigits) {
  EXPECT_EQ(PercentDecoded(""), "");
  EXPECT_EQ(PercentDecoded("%"), "%");
  EXPECT_EQ(PercentDecoded("%4"), "%4");
  EXPECT_EQ(PercentDecoded("a%4"), "a%4");
  EXPECT_EQ(PercentDecoded("%g1"), "%g1");
  EXPECT_EQ(PercentDecoded("%1g"), "%1g");
  EXPECT_EQ(PercentDecoded("100%"), "100%");
}

TEST(PercentDecoded, DecodesOnce) {
  EXPECT_EQ(PercentDecoded("%2541"), "%41");
  EXPECT_EQ(PercentDecoded("%%41"), "%A");
}

}  // namespace
}  // namespace mcpcell
