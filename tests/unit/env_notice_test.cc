#include "cell/env_notice.h"

#include <gtest/gtest.h>

namespace mcpcell {
namespace {

TEST(LooksLikeCredential, SuffixesAndWordsOfKeysTokensAndPasswords) {
  for (const char* name : {"GITHUB_TOKEN", "GITHUB_PERSONAL_ACCESS_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY",
                           "STRIPE_SECRET", "DB_PASSWORD", "PGPASSWORD", "MYSQL_ROOT_PASSWD", "API_KEY", "TOKEN",
                           "GITLAB_PAT", "GOOGLE_APPLICATION_CREDENTIALS", "BRAVE_APIKEY", "slack_bot_token"}) {
    EXPECT_TRUE(LooksLikeCredential(name)) << name;
  }
}

TEST(LooksLikeCredential, OrdinaryVariablesAndSocketsAreNot) {
  for (const char* name : {"PATH", "HOME", "SSH_AUTH_SOCK", "KEYBOARD", "MCP_INSPECTOR_SECRET_STORE", "TOKENIZER_PATH",
                           "LANG", "XDG_RUNTIME_DIR", "NODE_EXTRA_CA_CERTS", "KEY_FILE_DIR"}) {
    EXPECT_FALSE(LooksLikeCredential(name)) << name;
  }
}

TEST(UnpassedCredentials, NamesOnlyWhatTheCellDoesNotGetSortedOnce) {
  std::vector<std::string> environment{"PATH=/usr/bin", "OPENAI_API_KEY=sk-1", "GITHUB_TOKEN=ghp_x", "DB_PASSWORD=p",
                                       "NPM_TOKEN=n", "ANTHROPIC_API_KEY=a=b", "GITHUB_TOKEN=dup"};
  std::map<std::string, std::string> cell_env{{"PATH", "/usr/bin"}, {"DB_PASSWORD", "p"}};
  std::vector<SecretSpec> secrets{{"npm", "/run/npm", std::string("NPM_TOKEN")}, {"other", "/f", std::nullopt}};
  auto names = UnpassedCredentials(environment, cell_env, secrets, {"ANTHROPIC_API_KEY"});
  EXPECT_EQ(names, (std::vector<std::string>{"GITHUB_TOKEN", "OPENAI_API_KEY"}));
}

TEST(UnpassedCredentialsNote, NamesTheVariablesAndTheFlagsNeverAValue) {
  EXPECT_EQ(UnpassedCredentialsNote({}), "");
  std::string note = UnpassedCredentialsNote({"GITHUB_TOKEN", "OPENAI_API_KEY"});
  EXPECT_NE(note.find("GITHUB_TOKEN, OPENAI_API_KEY"), std::string::npos) << note;
  EXPECT_NE(note.find("--env GITHUB_TOKEN"), std::string::npos) << note;
  EXPECT_NE(note.find("--secret GITHUB_TOKEN=FILE --secret-env GITHUB_TOKEN"), std::string::npos) << note;
  EXPECT_NE(note.find("--drop-env GITHUB_TOKEN"), std::string::npos) << note;
}

}  // namespace
}  // namespace mcpcell
