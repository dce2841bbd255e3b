#include "util/nearest.h"

#include <gtest/gtest.h>

namespace mcpcell {
namespace {

TEST(EditDistance, CountsInsertDeleteSubstitute) {
  EXPECT_EQ(EditDistance("run", "run"), 0u);
  EXPECT_EQ(EditDistance("runn", "run"), 1u);
  EXPECT_EQ(EditDistance("isolat", "isolate"), 1u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
}

TEST(Nearest, TyposFindTheWordAndFarWordsFindNothing) {
  std::vector<std::string> commands{"run", "doctor", "policy", "registry", "gc", "egress-proxy"};
  EXPECT_EQ(Nearest("runn", commands), std::vector<std::string>{"run"});
  EXPECT_EQ(Nearest("doctr", commands), std::vector<std::string>{"doctor"});
  EXPECT_TRUE(Nearest("version", commands).empty());
}

TEST(Nearest, ContainmentCountsAndNearestComesFirst) {
  std::vector<std::string> names{"filesystem", "firecrawl", "memory", "github", "gitlab"};
  EXPECT_EQ(Nearest("git", names), (std::vector<std::string>{"github", "gitlab"}));
  EXPECT_EQ(Nearest("filesystm", names).front(), "filesystem");
}

}  // namespace
}  // namespace mcpcell
