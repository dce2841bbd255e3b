// util/regular_file.h: a missing file is "nothing there", anything but a
// regular file is refused without blocking (a FIFO), a file over the limit is
// refused, and O_NOFOLLOW refuses a symlink.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "temp_dir.h"
#include "util/regular_file.h"

namespace mcpcell {
namespace {

class RegularFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  testing::TempDir tmp_{"regular-file"};
  std::string dir_ = tmp_.path();
};

TEST_F(RegularFileTest, ReadsAWholeFileAndTellsAMissingOneApart) {
  auto text = ReadRegularFile(Write("a", "hello\n"), "read test file", 1 << 20);
  ASSERT_TRUE(text.ok()) << text.error().Message();
  EXPECT_EQ(**text, "hello\n");
  auto missing = ReadRegularFile(dir_ + "/none", "read test file", 1 << 20);
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  auto under_a_file = ReadRegularFile(dir_ + "/a/b", "read test file", 1 << 20);  // ENOTDIR
  ASSERT_TRUE(under_a_file.ok());
  EXPECT_FALSE(under_a_file->has_value());
}

TEST_F(RegularFileTest, RefusesAFifoADirectoryAndALargeFile) {
  std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto refused = ReadRegularFile(fifo, "read test file", 1 << 20);  // must not wait for a writer
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().detail, kNotRegularFile);
  EXPECT_NE(refused.error().Message().find(fifo), std::string::npos) << refused.error().Message();
  EXPECT_FALSE(ReadRegularFile(dir_, "read test file", 1 << 20).ok());
  auto large = ReadRegularFile(Write("big", std::string((2 << 20) + 1, 'x')), "read test file", 2 << 20);
  ASSERT_FALSE(large.ok());
  EXPECT_NE(large.error().detail.find("larger than 2 MiB"), std::string::npos) << large.error().Message();
}

TEST_F(RegularFileTest, NoFollowRefusesASymlink) {
  std::string target = Write("target", "secret");
  std::string link = dir_ + "/link";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_TRUE(ReadRegularFile(link, "read test file", 1 << 20).ok());
  auto refused = ReadRegularFile(link, "read test file", 1 << 20, O_NOFOLLOW);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().err, ELOOP);
}

}  // namespace
}  // namespace mcpcell
