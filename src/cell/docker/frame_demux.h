#pragma once
// The Docker attach stream without a TTY multiplexes stdout and stderr: each
// frame is an 8-byte header {stream, 0, 0, 0, size (big-endian u32)} then
// `size` bytes (Engine API docs, "Attach to a container", stream format).
// This parser splits such a byte stream back into its streams, incrementally:
// headers and payloads may be cut anywhere by the socket.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "util/error.h"

namespace mcpcell::docker {

class FrameDemux {
 public:
  /// stream: 0 stdin (never sent), 1 stdout, 2 stderr.
  using Sink = std::function<Status(int stream, std::string_view data)>;

  explicit FrameDemux(Sink sink) : sink_(std::move(sink)) {}

  /// Feeds the next bytes of the stream. Payload is passed on as it arrives
  /// (no whole-frame buffering: a 10 MiB line is not held in memory). Fails on
  /// a header with an unknown stream number, or when the sink fails.
  Status Feed(std::string_view bytes);

  /// True between frames: the stream may end here without losing data.
  bool AtFrameBoundary() const { return header_len_ == 0 && remaining_ == 0; }

 private:
  Sink sink_;
  unsigned char header_[8] = {};
  std::size_t header_len_ = 0;
  std::uint32_t remaining_ = 0;  ///< payload bytes left in the current frame
  int stream_ = 0;
};

}  // namespace mcpcell::docker
