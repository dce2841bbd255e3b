// ReleaseStartupPages on this test process itself: the pages it drops must
// read back the same, and a read-only mapping holding a private (copied)
// page must keep it.

#include "util/startup_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "util/unique_fd.h"

namespace mcpcell {
namespace {

class MappedFile {
 public:
  explicit MappedFile(const std::string& text) {
    char path[] = "/tmp/mcpcell-startup-pages-XXXXXX";
    UniqueFd fd(mkstemp(path));
    unlink(path);
    std::string page(4096, '\0');
    std::memcpy(page.data(), text.data(), text.size());
    if (write(fd.get(), page.data(), page.size()) != 4096) return;
    addr_ = static_cast<char*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0));
  }
  ~MappedFile() {
    if (addr_ != MAP_FAILED) munmap(addr_, 4096);
  }
  char* addr() const { return addr_; }

 private:
  char* addr_ = static_cast<char*>(MAP_FAILED);
};

TEST(StartupPages, CleanPagesReadBackAndCopiedPagesAreKept) {
  MappedFile clean("as in the file");
  MappedFile copied("as in the file");
  ASSERT_NE(clean.addr(), MAP_FAILED);
  ASSERT_NE(copied.addr(), MAP_FAILED);
  ASSERT_EQ(mprotect(clean.addr(), 4096, PROT_READ), 0);
  EXPECT_EQ(std::string(clean.addr()), "as in the file");  // resident now
  std::strcpy(copied.addr(), "written here");               // a private copy of the page
  ASSERT_EQ(mprotect(copied.addr(), 4096, PROT_READ), 0);   // read-only, but not clean

  std::size_t released = ReleaseStartupPages();
  EXPECT_GT(released, 0u) << "this process maps libraries it no longer reads; nothing was released";
  EXPECT_EQ(std::string(clean.addr()), "as in the file");
  EXPECT_EQ(std::string(copied.addr()), "written here") << "a copied-on-write page was dropped";
  // Code and data of the binary and its libraries still work after the release.
  std::string s = std::to_string(std::strtol("12345", nullptr, 10));
  EXPECT_EQ(s, "12345");
}

}  // namespace
}  // namespace mcpcell
