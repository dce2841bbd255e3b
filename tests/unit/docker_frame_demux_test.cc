// The attach stream demultiplexer: frames cut anywhere by the socket come
// back as the exact stdout and stderr byte streams.
#include <gtest/gtest.h>

#include <string>

#include "cell/docker/frame_demux.h"

namespace mcpcell::docker {
namespace {

std::string Frame(int stream, const std::string& payload) {
  std::string h(8, '\0');
  h[0] = static_cast<char>(stream);
  auto n = static_cast<std::uint32_t>(payload.size());
  h[4] = static_cast<char>(n >> 24);
  h[5] = static_cast<char>((n >> 16) & 0xff);
  h[6] = static_cast<char>((n >> 8) & 0xff);
  h[7] = static_cast<char>(n & 0xff);
  return h + payload;
}

struct Collected {
  std::string out, err;
};

FrameDemux Collector(Collected* c) {
  return FrameDemux([c](int s, std::string_view d) {
    (s == 2 ? c->err : c->out).append(d);
    return Status{};
  });
}

TEST(FrameDemux, SplitsStreams) {
  Collected c;
  auto d = Collector(&c);
  ASSERT_TRUE(d.Feed(Frame(1, "{\"a\":1}\n") + Frame(2, "log line\n") + Frame(1, "{\"b\":2}\n")).ok());
  EXPECT_EQ(c.out, "{\"a\":1}\n{\"b\":2}\n");
  EXPECT_EQ(c.err, "log line\n");
  EXPECT_TRUE(d.AtFrameBoundary());
}

TEST(FrameDemux, ByteByByteAndBinarySafe) {
  std::string payload;
  for (int i = 0; i < 1000; ++i) payload += static_cast<char>(i % 256);  // includes NULs and header-like bytes
  std::string wire = Frame(1, payload) + Frame(2, std::string("\x01\0\0\0", 4)) + Frame(1, "end");
  Collected c;
  auto d = Collector(&c);
  for (char ch : wire) ASSERT_TRUE(d.Feed(std::string_view(&ch, 1)).ok());
  EXPECT_EQ(c.out, payload + "end");
  EXPECT_EQ(c.err, std::string("\x01\0\0\0", 4));
}

TEST(FrameDemux, LargeFrameInChunks) {
  std::string big(10 * 1024 * 1024 + 7, 'x');
  std::string wire = Frame(1, big);
  Collected c;
  auto d = Collector(&c);
  for (std::size_t off = 0; off < wire.size(); off += 65531) {
    ASSERT_TRUE(d.Feed(std::string_view(wire).substr(off, 65531)).ok());
  }
  EXPECT_EQ(c.out.size(), big.size());
  EXPECT_EQ(c.out, big);
  EXPECT_TRUE(d.AtFrameBoundary());
}

TEST(FrameDemux, StreamCutMidFrameIsVisible) {
  Collected c;
  auto d = Collector(&c);
  std::string wire = Frame(1, "hello world");
  ASSERT_TRUE(d.Feed(std::string_view(wire).substr(0, 12)).ok());
  EXPECT_FALSE(d.AtFrameBoundary());
  Collected c2;
  auto d2 = Collector(&c2);
  ASSERT_TRUE(d2.Feed(std::string_view(wire).substr(0, 5)).ok());
  EXPECT_FALSE(d2.AtFrameBoundary());
}

TEST(FrameDemux, RejectsATtyStream) {
  Collected c;
  auto d = Collector(&c);
  // Raw TTY output has no headers: "{"jsonrpc"..." is not a frame.
  auto s = d.Feed("{\"jsonrpc\":\"2.0\"}\n");
  EXPECT_FALSE(s.ok());
}

TEST(FrameDemux, SinkFailureStops) {
  FrameDemux d([](int, std::string_view) -> Status { return MakeError("write", "stdout", "closed"); });
  EXPECT_FALSE(d.Feed(Frame(1, "x")).ok());
}

TEST(FrameDemux, EmptyFrameIsFine) {
  Collected c;
  auto d = Collector(&c);
  ASSERT_TRUE(d.Feed(Frame(1, "") + Frame(1, "a")).ok());
  EXPECT_EQ(c.out, "a");
}

}  // namespace
}  // namespace mcpcell::docker
