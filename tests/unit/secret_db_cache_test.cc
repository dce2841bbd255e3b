// The compiled secret rule cache (src/guard/secret_db_cache.h): a stored
// database is loaded instead of compiled, and every file or directory that
// is not exactly what mcpcell wrote, where only the user could write it, is
// refused — the scanner then compiles, and still finds what it must.

#include <fcntl.h>
#include <hs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "temp_dir.h"
#include "audit/sha256.h"
#include "guard/secret_db_cache.h"
#include "guard/secret_scanner.h"
#include "secret_samples.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

using TempBase = testing::TempDir;

std::vector<SecretRule> Rules() {
  SecretRule r;
  r.name = "acme-key";
  r.regex = "ACME-[0-9]{8}";
  return {r};
}

std::string Slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Spit(const std::string& p, const std::string& data) { std::ofstream(p, std::ios::binary | std::ios::trunc) << data; }

// A scanner built through `cache` finds the rule's token (however it got its database).
void ExpectWorks(const SecretDbCache& cache) {
  auto s = SecretScanner::Compile(Rules(), &cache);
  ASSERT_TRUE(s.ok()) << s.error().Message();
  auto scratch = s->NewScratch();
  ASSERT_TRUE(scratch.ok());
  EXPECT_EQ(s->Scan("x ACME-12345678 y", scratch->get()).size(), 1u);
}

TEST(SecretDbCache, AFreshCompileIsStoredPrivatelyAndLoadedNextTime) {
  TempBase base;
  SecretDbCache cache(base.path());
  std::string key = SecretDbCache::Key(Rules());
  EXPECT_FALSE(cache.Load(key).ok()) << "nothing stored yet";
  ExpectWorks(cache);
  std::string file = cache.dir() + "/" + key + ".hsdb";
  struct stat st{};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(cache.dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto db = cache.Load(key);
  ASSERT_TRUE(db.ok()) << db.error().Message();
  ExpectWorks(cache);
}

TEST(SecretDbCache, TheKeyCoversEveryRuleAndItsFlags) {
  auto rules = Rules();
  std::string key = SecretDbCache::Key(rules);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, SecretDbCache::Key(Rules())) << "stable";
  rules[0].caseless = true;
  EXPECT_NE(SecretDbCache::Key(rules), key);
  rules = Rules();
  rules[0].regex = "ACME-[0-9]{9}";
  EXPECT_NE(SecretDbCache::Key(rules), key);
  rules = Rules();
  rules.push_back(rules[0]);
  EXPECT_NE(SecretDbCache::Key(rules), key) << "a user rule added";
  // Names and regexes cannot be shifted into each other.
  auto a = Rules(), b = Rules();
  a[0].name = "x";
  a[0].regex = "yz";
  b[0].name = "xy";
  b[0].regex = "z";
  EXPECT_NE(SecretDbCache::Key(a), SecretDbCache::Key(b));
}

TEST(SecretDbCache, CorruptTruncatedOrForeignFilesAreRefusedAndReplaced) {
  TempBase base;
  SecretDbCache cache(base.path());
  std::string key = SecretDbCache::Key(Rules());
  ExpectWorks(cache);
  std::string file = cache.dir() + "/" + key + ".hsdb", good = Slurp(file);
  ASSERT_GT(good.size(), 200u);
  std::string flipped = good;
  flipped[flipped.size() - 10] ^= 0x40;
  std::string garbage_payload = "this is no database";
  std::string foreign = "mcpcell-secret-db 1\n" + key + "\n" + Sha256Hex(garbage_payload) + "\n" + garbage_payload;
  for (const auto& [what, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"a flipped byte", flipped}, {"truncated", good.substr(0, good.size() / 2)}, {"empty", ""},
           {"header only", good.substr(0, 150)}, {"another format", "garbage\n"},
           {"a hash-consistent payload Vectorscan refuses", foreign}}) {
    Spit(file, bytes);
    ::chmod(file.c_str(), 0600);
    auto db = cache.Load(key);
    EXPECT_FALSE(db.ok()) << what;
    ExpectWorks(cache);  // compiles, and writes a good file back
    EXPECT_TRUE(cache.Load(key).ok()) << what << ": replaced";
  }
  // Another rule set's database under this key's name.
  std::string other_key = std::string(64, 'a');
  Spit(cache.dir() + "/" + other_key + ".hsdb", good);
  ::chmod((cache.dir() + "/" + other_key + ".hsdb").c_str(), 0600);
  auto wrong = cache.Load(other_key);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().Message().find("another rule set"), std::string::npos) << wrong.error().Message();
}

TEST(SecretDbCache, AMissingDirectoryIsCreatedAndAMissingBaseToo) {
  TempBase base;
  SecretDbCache cache(base.path() + "/not/yet/here");
  EXPECT_FALSE(cache.Load(SecretDbCache::Key(Rules())).ok());
  ExpectWorks(cache);
  EXPECT_TRUE(cache.Load(SecretDbCache::Key(Rules())).ok());
  SecretDbCache relative("relative/base");
  EXPECT_FALSE(relative.Load(SecretDbCache::Key(Rules())).ok());
  EXPECT_FALSE(relative.Store("k", nullptr).ok());
}

TEST(SecretDbCache, DirectoriesAndFilesOthersCanWriteAreNotTrusted) {
  TempBase base;
  SecretDbCache cache(base.path());
  std::string key = SecretDbCache::Key(Rules());
  ExpectWorks(cache);
  std::string file = cache.dir() + "/" + key + ".hsdb";
  // A group- or world-writable file, then directory: refused, and the scan still works.
  ::chmod(file.c_str(), 0666);
  EXPECT_FALSE(cache.Load(key).ok());
  ::chmod(file.c_str(), 0600);
  for (const std::string& dir : {cache.dir(), base.path() + "/mcpcell"}) {
    ::chmod(dir.c_str(), 0777);
    auto db = cache.Load(key);
    ASSERT_FALSE(db.ok()) << dir;
    EXPECT_NE(db.error().Message().find("writable by nobody else"), std::string::npos) << db.error().Message();
    EXPECT_FALSE(cache.Store(key, nullptr).ok());
    ExpectWorks(cache);
    ::chmod(dir.c_str(), 0700);
  }
  EXPECT_TRUE(cache.Load(key).ok());
}

TEST(SecretDbCache, SymlinksAndFifosArePlantedInVain) {
  TempBase base, elsewhere;
  SecretDbCache cache(base.path()), other(elsewhere.path());
  std::string key = SecretDbCache::Key(Rules());
  ExpectWorks(other);  // a good database, somewhere else
  ASSERT_EQ(::mkdir((base.path() + "/mcpcell").c_str(), 0700), 0);
  ASSERT_EQ(::symlink(other.dir().c_str(), cache.dir().c_str()), 0);
  EXPECT_FALSE(cache.Load(key).ok()) << "secret-db is a symlink";
  ExpectWorks(cache);
  ASSERT_EQ(::unlink(cache.dir().c_str()), 0);
  ASSERT_EQ(::mkdir(cache.dir().c_str(), 0700), 0);
  std::string file = cache.dir() + "/" + key + ".hsdb";
  ASSERT_EQ(::symlink((other.dir() + "/" + key + ".hsdb").c_str(), file.c_str()), 0);
  EXPECT_FALSE(cache.Load(key).ok()) << "the file is a symlink";
  ASSERT_EQ(::unlink(file.c_str()), 0);
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  EXPECT_FALSE(cache.Load(key).ok()) << "a FIFO: refused without blocking";
  ExpectWorks(cache);  // the rename replaces the FIFO
  EXPECT_TRUE(cache.Load(key).ok());
}

TEST(SecretDbCache, AFileAnotherUserOwnsIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another uid";
  TempBase base;
  SecretDbCache cache(base.path());
  std::string key = SecretDbCache::Key(Rules());
  ExpectWorks(cache);
  std::string file = cache.dir() + "/" + key + ".hsdb";
  ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
  EXPECT_FALSE(cache.Load(key).ok());
  ASSERT_EQ(::chown(cache.dir().c_str(), 65534, 65534), 0);
  EXPECT_FALSE(cache.Load(key).ok());
  EXPECT_FALSE(cache.Store(key, nullptr).ok());
}

TEST(SecretDbCache, OnlyTheNewestDatabasesAreKept) {
  TempBase base;
  SecretDbCache cache(base.path());
  for (int i = 0; i < 12; ++i) {
    auto rules = Rules();
    rules[0].regex = "ACME-[0-9]{" + std::to_string(8 + i) + "}";
    ASSERT_TRUE(SecretScanner::Compile(rules, &cache).ok());
  }
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(cache.dir())) n += e.path().extension() == ".hsdb";
  EXPECT_EQ(n, SecretDbCache::kKeep);
}

}  // namespace
}  // namespace mcpcell
