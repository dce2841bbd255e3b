// The relay's frames (dns_report.h, dns_relay.c): split from a byte stream
// cut anywhere, never more than one frame held, encoded back the same way.
#include <elf.h>

#include <cstring>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cell/docker/dns_relay_blob.h"
#include "cell/docker/dns_report.h"

namespace mcpcell::docker {
namespace {

struct Seen {
  std::uint16_t port;
  std::uint32_t address;
  std::string payload;
};

std::vector<Seen> FeedAll(RelayFrameReader& r, const std::string& bytes, std::size_t piece) {
  std::vector<Seen> out;
  for (std::size_t off = 0; off < bytes.size(); off += piece) {
    r.Feed(std::string_view(bytes).substr(off, piece),
           [&](const RelayFrame& f) { out.push_back({f.port, f.address, std::string(f.payload)}); });
  }
  return out;
}

TEST(DnsRelayFrames, RoundTripCutAnywhere) {
  std::string stream;
  for (int i = 0; i < 5; ++i) {
    std::string payload(static_cast<std::size_t>(i * 37), static_cast<char>('a' + i));
    stream += RelayFrameReader::Encode({static_cast<std::uint16_t>(1000 + i), 0x0100007fU, payload});
  }
  for (std::size_t piece : {1UL, 3UL, 8UL, 9UL, 4096UL}) {
    RelayFrameReader r;
    auto seen = FeedAll(r, stream, piece);
    ASSERT_EQ(seen.size(), 5U) << "piece " << piece;
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(seen[static_cast<std::size_t>(i)].port, 1000 + i);
      EXPECT_EQ(seen[static_cast<std::size_t>(i)].address, 0x0100007fU);
      EXPECT_EQ(seen[static_cast<std::size_t>(i)].payload.size(), static_cast<std::size_t>(i * 37));
    }
  }
}

TEST(DnsRelayFrames, LargestDatagramAndEmptyOne) {
  std::string big(65535, 'x');
  std::string stream = RelayFrameReader::Encode({53, 1, big}) + RelayFrameReader::Encode({53, 1, ""});
  RelayFrameReader r;
  auto seen = FeedAll(r, stream, 1000);
  ASSERT_EQ(seen.size(), 2U);
  EXPECT_EQ(seen[0].payload, big);
  EXPECT_EQ(seen[1].payload, "");
}

TEST(DnsRelayFrames, EncodeCapsAtOneDatagram) {
  std::string too_big(70000, 'y');
  EXPECT_EQ(RelayFrameReader::Encode({0, 0, too_big}).size(), RelayFrameReader::kHeader + 65535);
}

TEST(DnsRelayFrames, RelayCommandWrapsTheServer) {
  EXPECT_EQ(DnsRelayCommand({"node", "x.js"}),
            (std::vector<std::string>{"/run/mcpcell-dns/relay", "hold", "--", "node", "x.js"}));
}

// The relay is embedded, and a static ELF executable (no PT_INTERP: no
// dynamic loader or libc of the image's is needed), so it runs in any image.
TEST(DnsRelayFrames, EmbeddedRelayIsAStaticElfExecutable) {
  std::string_view relay = DnsRelayProgram();
  ASSERT_GT(relay.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr eh{};
  std::memcpy(&eh, relay.data(), sizeof eh);
  ASSERT_EQ(std::string_view(reinterpret_cast<const char*>(eh.e_ident), 4), std::string_view("\x7f" "ELF", 4));
  ASSERT_LE(eh.e_phoff + std::size_t{eh.e_phnum} * sizeof(Elf64_Phdr), relay.size());
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    std::memcpy(&ph, relay.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
    EXPECT_NE(ph.p_type, static_cast<std::uint32_t>(PT_INTERP)) << "the relay is dynamically linked";
  }
}

}  // namespace
}  // namespace mcpcell::docker
