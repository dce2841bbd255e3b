#include "util/units.h"

#include <gtest/gtest.h>

namespace mcpcell {
namespace {

TEST(ParseSize, Units) {
  EXPECT_EQ(*ParseSize("65536"), 65536u);
  EXPECT_EQ(*ParseSize("512m"), 512ULL << 20);
  EXPECT_EQ(*ParseSize("1G"), 1ULL << 30);
  EXPECT_EQ(*ParseSize("1.5k"), 1536u);
  EXPECT_EQ(*ParseSize("64MiB"), 64ULL << 20);
  for (const char* bad : {"", "m", "-1m", "12x", "1e400"}) EXPECT_FALSE(ParseSize(bad).ok()) << bad;
}

TEST(ParseDuration, Units) {
  EXPECT_EQ(ParseDuration("30")->count(), 30000);
  EXPECT_EQ(ParseDuration("500ms")->count(), 500);
  EXPECT_EQ(ParseDuration("1.5s")->count(), 1500);
  EXPECT_EQ(ParseDuration("5m")->count(), 300000);
  EXPECT_EQ(ParseDuration("1h")->count(), 3600000);
  for (const char* bad : {"", "s", "5 parsecs", "-3s"}) EXPECT_FALSE(ParseDuration(bad).ok()) << bad;
}

}  // namespace
}  // namespace mcpcell
