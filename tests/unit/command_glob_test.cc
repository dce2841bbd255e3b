#include "policy/command_glob.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace mcpcell {
namespace {

using Words = std::vector<std::string>;

TEST(ShellWords, BlanksSeparateAndQuotesGroup) {
  EXPECT_EQ(ShellWords("  node\t/srv/a.js  --x "), (Words{"node", "/srv/a.js", "--x"}));
  EXPECT_EQ(ShellWords(R"(python3 -m 'my mod' "a b"c)"), (Words{"python3", "-m", "my mod", "a bc"}));
  EXPECT_EQ(ShellWords(R"(a\ b c\'d)"), (Words{"a b", "c'd"}));
}

TEST(ShellWords, EmptyQuotesAreAWordAndAnUnclosedQuoteRunsToTheEnd) {
  EXPECT_EQ(ShellWords("sh -c ''"), (Words{"sh", "-c", ""}));
  EXPECT_EQ(ShellWords("sh -c 'x y"), (Words{"sh", "-c", "x y"}));
  EXPECT_EQ(ShellWords("a \\"), (Words{"a", "\\"}));  // a trailing backslash is kept
  EXPECT_TRUE(ShellWords(" \t ").empty());
}

TEST(CommandGlobMatch, EachWordMatchesItsGlobWordAndTheCountsAgree) {
  EXPECT_TRUE(CommandGlobMatch("command://node /srv/*.js", "command://node /srv/server.js"));
  EXPECT_FALSE(CommandGlobMatch("command:///usr/bin/*", "command:///usr/bin/node -e CODE"));
  EXPECT_FALSE(CommandGlobMatch("command://node /srv/*", "command://node"));
  EXPECT_TRUE(CommandGlobMatch("command://x 'a b'", "command://x a\\ b"));
}

}  // namespace
}  // namespace mcpcell
