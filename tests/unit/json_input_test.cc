// Policies, profiles, registry catalogs and pin files are read with
// ParseJsonText (util/json_input.h): a key written twice in one object is
// refused, with where it is (adv8: a second "rules" hid a policy's first).
#include "util/json_input.h"

#include <gtest/gtest.h>

namespace mcpcell {
namespace {

std::string Refusal(std::string_view text) {
  auto j = ParseJsonText(text, "p.json");
  if (j.ok()) return "accepted";
  return j.error().Message();
}

TEST(JsonInput, AKeyTwiceInOneObjectIsRefusedWithItsPath) {
  EXPECT_NE(Refusal(R"({"rules":[{"action":"deny"}],"rules":[]})").find("at $: the key \"rules\" is given twice"),
            std::string::npos)
      << Refusal(R"({"rules":[],"rules":[]})");
  std::string nested = Refusal(R"({"mcpcell":{"tools":{"deny":["w"]},"tools":{}}})");
  EXPECT_NE(nested.find("at $.mcpcell: the key \"tools\""), std::string::npos) << nested;
  std::string in_array = Refusal(R"({"rules":[{"a":1},{"action":"deny","action":"allow"}]})");
  EXPECT_NE(in_array.find("at $.rules[1]: the key \"action\""), std::string::npos) << in_array;
}

TEST(JsonInput, TheSameKeyInTwoObjectsIsNoDuplicate) {
  EXPECT_EQ(Refusal(R"({"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":2}],"x":[]})"), "accepted");
  auto j = ParseJsonText(R"({"a":{"x":1},"b":[1,{"x":2}]})", "p.json");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["b"][1]["x"], 2) << "the document is parsed as before";
}

TEST(JsonInput, EscapedSpellingsOfOneKeyAreTheSameKey) {
  // "\u0072ules" is "rules" once decoded: the readers that take the last see one key twice.
  EXPECT_NE(Refusal(R"({"rules":[],"\u0072ules":[]})").find("given twice"), std::string::npos);
}

}  // namespace
}  // namespace mcpcell
