// The npmrc files an install is judged by and made under, read once (adv15:
// a FIFO userconfig answered the check and the install differently).
#include "source/npmrc_snapshot.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>
#include <fcntl.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "temp_dir.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

Result<NpmrcSnapshot> Take(const std::string& parent, const std::string& global, const std::string& user) {
  auto snap = NpmrcSnapshot::Make(parent);
  if (!snap.ok()) return snap.error();
  if (auto copied = snap->Copy(global, user); !copied.ok()) return copied.error();
  return std::move(*snap);
}

class NpmrcSnapshotTest : public ::testing::Test {
 protected:
  testing::TempDir tmp_{"npmrc-snap"};
  const std::string dir_ = tmp_.path();

  std::string Write(const std::string& name, const std::string& text) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  static std::string Flag(const NpmrcSnapshot& s, const std::string& name) {
    for (const auto& f : s.Flags()) {
      if (f.rfind("--" + name + "=", 0) == 0) return f.substr(name.size() + 3);
    }
    return {};
  }
  static std::string Read(const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

// adv18: the copies are no files a cell could be granted (a --read ~/.cache
// cell read them while another launch installed): sealed memfds, which npm
// opens as /proc/self/fd/N of its own.
TEST_F(NpmrcSnapshotTest, CopiesWhatTheFilesHoldNowIntoSealedMemfdsAndRemovesTheCache) {
  std::string global = Write("global", "cafile=/etc/ssl/certs/ca-certificates.crt\n");
  std::string user = Write("user", "registry=https://registry.npmjs.org/\n//r/:_authToken=x\n");
  std::string cache;
  {
    auto snap = Take(dir_, global, user);
    ASSERT_TRUE(snap.ok()) << snap.error().Message();
    std::string user_copy = Flag(*snap, "userconfig");
    ASSERT_EQ(user_copy.rfind("/proc/self/fd/", 0), 0u) << user_copy;
    Write("user", "registry=http://attacker.example/\n");  // changed after: the copy keeps what was read
    EXPECT_EQ(Read(user_copy), "registry=https://registry.npmjs.org/\n//r/:_authToken=x\n");
    EXPECT_EQ(Read(Flag(*snap, "globalconfig")), "cafile=/etc/ssl/certs/ca-certificates.crt\n");
    std::vector<int> fds = snap->Fds();
    ASSERT_EQ(fds.size(), 2u);
    EXPECT_EQ(user_copy, "/proc/self/fd/" + std::to_string(fds[1]));
    for (int fd : fds) {
      EXPECT_EQ(::fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC) << "passed to npm alone";
      EXPECT_EQ(::fcntl(fd, F_GET_SEALS) & (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK),
                F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK);
      EXPECT_LT(::pwrite(fd, "x", 1, 0), 0) << "sealed: every npm run reads the same";
    }
    cache = Flag(*snap, "cache");
    struct stat st{};
    ASSERT_EQ(::stat(fs::path(cache).parent_path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_FALSE(fs::exists(fs::path(cache).parent_path() / "user")) << "no copy on disk";
  }
  EXPECT_FALSE(fs::exists(fs::path(cache).parent_path()));
}

TEST_F(NpmrcSnapshotTest, AMissingFileIsAnEmptyCopyAndAFifoIsRefused) {
  auto snap = Take(dir_, "", dir_ + "/none");
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(Read(Flag(*snap, "userconfig")), "");
  std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto refused = Take(dir_, "", fifo);  // must not block waiting for a writer
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().Message().find("not a regular file"), std::string::npos) << refused.error().Message();
  EXPECT_FALSE(Take(dir_, dir_, "").ok()) << "a directory";
}

// adv16: before any npm run lists the config, what npm prints about the
// copies' URLs (an unknown `//host/TOKEN/:key`'s warning) is masked.
TEST_F(NpmrcSnapshotTest, TheTokensOfEveryUrlTheCopiesNameAndNoConfigFlagsBeforeTheCopy) {
  std::string user = Write("user", "registry = \"https://npm.fury.io/Fq8abcDEF123ghiJKL456mn/acme/\"\n"
                                   "//r.example/api/npm/AKCp8abcDEF123ghiJKL456mnop/:always-auth=true\n"
                                   "//registry.npmjs.org/:_authToken=npm_x\n");
  auto snap = NpmrcSnapshot::Make(dir_);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->Flags().size(), 1u) << "only --cache before the copy";
  EXPECT_EQ(snap->ProjectFlag(), "") << "--prefix would change what `npm config get globalconfig` answers";
  ASSERT_TRUE(snap->Copy("", user).ok());
  EXPECT_EQ(snap->ProjectFlag().rfind("--prefix=", 0), 0u);
  EXPECT_EQ(snap->Flags().size(), 3u);
  EXPECT_EQ(snap->UrlTokenPieces(), (std::vector<std::string>{"Fq8abcDEF123ghiJKL456mn", "AKCp8abcDEF123ghiJKL456mnop"}));
}

TEST(NpmrcPathsFromGet, ReadsBothPathsAndRefusesOtherLines) {
  auto p = NpmrcPathsFromGet("globalconfig=/usr/etc/npmrc\nuserconfig=/root/.npmrc\n");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->first, "/usr/etc/npmrc");
  EXPECT_EQ(p->second, "/root/.npmrc");
  auto none = NpmrcPathsFromGet("globalconfig=undefined\nuserconfig=/root/.npmrc\n");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->first, "");
  EXPECT_FALSE(NpmrcPathsFromGet("globalconfig=/a\nregistry=http://x/\nuserconfig=/b\n").ok());
}

}  // namespace
}  // namespace mcpcell
