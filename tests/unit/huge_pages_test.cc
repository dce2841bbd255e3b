// Large relay buffers are advised transparent huge pages (util/huge_pages.h):
// a 24 MiB line costs ~6,000 page faults per buffer without it. The advice is
// what the kernel shows as "hg" in a mapping's VmFlags (proc(5), smaps), so
// these tests read that, not a timing.

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <variant>

#include "relay/envelope.h"
#include "relay/line_framer.h"
#include "util/huge_pages.h"

namespace mcpcell {
namespace {

struct Mapping {
  std::uintptr_t begin = 0, end = 0;
  bool huge_advised = false;
};

// Every mapping of this process, with whether it carries MADV_HUGEPAGE.
std::vector<Mapping> Mappings() {
  std::vector<Mapping> out;
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  while (std::getline(smaps, line)) {
    std::uintptr_t b = 0, e = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> b >> dash >> e && dash == '-') {
      out.push_back({b, e, false});
    } else if (line.rfind("VmFlags:", 0) == 0 && !out.empty()) {
      out.back().huge_advised = line.find(" hg") != std::string::npos;
    }
  }
  return out;
}

bool AdvisedAt(const void* p) {
  auto a = reinterpret_cast<std::uintptr_t>(p);
  for (const Mapping& m : Mappings()) {
    if (a >= m.begin && a < m.end) return m.huge_advised;
  }
  return false;
}

// A kernel built without THP refuses the advice (EINVAL): nothing to observe.
class HugePages : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) {
      GTEST_SKIP() << "this kernel has no transparent huge pages (no /sys/kernel/mm/transparent_hugepage)";
    }
  }
};

std::size_t AdvisedBytes() {
  std::size_t n = 0;
  for (const Mapping& m : Mappings()) n += m.huge_advised ? m.end - m.begin : 0;
  return n;
}

TEST_F(HugePages, ALargeRegionIsAdvisedASmallOneIsNot) {
  constexpr std::size_t kBig = 8u << 20, kSmall = 1u << 20;
  void* big = ::mmap(nullptr, kBig, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void* small = ::mmap(nullptr, kSmall, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(big, MAP_FAILED);
  ASSERT_NE(small, MAP_FAILED);
  AdviseHugePages(big, kBig);
  AdviseHugePages(small, kSmall);
  EXPECT_TRUE(AdvisedAt(big));
  EXPECT_FALSE(AdvisedAt(small)) << "below kHugePageWorthwhile the rounding would cost more than it saves";
  ::munmap(big, kBig);
  ::munmap(small, kSmall);
}

TEST_F(HugePages, AnUnalignedStartIsAdvisedFromItsNextPage) {
  constexpr std::size_t kSize = 8u << 20;
  char* base = static_cast<char*>(::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(base, MAP_FAILED);
  AdviseHugePages(base + 16, kSize - 16);  // as malloc hands out a large block: after its header
  EXPECT_FALSE(AdvisedAt(base)) << "the partial first page is not the caller's to advise";
  EXPECT_TRUE(AdvisedAt(base + 4096));
  ::munmap(base, kSize);
}

TEST_F(HugePages, TheFramersBufferIsAdvisedOnceItGrowsLarge) {
  GrowableBuffer buf;
  buf.Resize(1u << 20);
  EXPECT_FALSE(AdvisedAt(buf.data()));
  buf.Resize(8u << 20);
  EXPECT_TRUE(AdvisedAt(buf.data()));
  buf.Resize(32u << 20);  // mremap may move it: the advice must come along
  EXPECT_TRUE(AdvisedAt(buf.data()));
}

TEST_F(HugePages, ALargeMessagesDomIsAdvised) {
  std::string line = R"({"jsonrpc":"2.0","method":"notifications/message","params":{"data":")" +
                     std::string(24u << 20, 'a') + "\"}}" + std::string(LineFramer::kPadding, ' ');
  std::string_view text(line.data(), line.size() - LineFramer::kPadding);
  EnvelopeParser parser(64u << 20);
  std::size_t before = AdvisedBytes();
  ASSERT_TRUE(std::holds_alternative<Envelope>(parser.Parse(text)));
  // The decoded strings (5/3 of the line) and the tape (8 bytes per byte).
  EXPECT_GE(AdvisedBytes() - before, std::size_t{40} << 20);
  // That Shrink gives the DOM's pages back is envelope_memory_test.cc's (by
  // RSS: under ASan a freed block stays mapped in its quarantine).
}

}  // namespace
}  // namespace mcpcell
