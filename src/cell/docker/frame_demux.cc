#include "cell/docker/frame_demux.h"

#include <algorithm>

namespace mcpcell::docker {

Status FrameDemux::Feed(std::string_view bytes) {
  while (!bytes.empty()) {
    if (remaining_ == 0) {
      std::size_t take = std::min(sizeof(header_) - header_len_, bytes.size());
      std::copy_n(bytes.data(), take, header_ + header_len_);
      header_len_ += take;
      bytes.remove_prefix(take);
      if (header_len_ < sizeof(header_)) return {};
      header_len_ = 0;
      if (header_[0] > 2 || header_[1] != 0 || header_[2] != 0 || header_[3] != 0) {
        return MakeError("read engine attach stream", "",
                         "bad frame header (stream byte " + std::to_string(header_[0]) +
                             "); was the container created with a TTY?");
      }
      stream_ = header_[0];
      remaining_ = (std::uint32_t{header_[4]} << 24) | (std::uint32_t{header_[5]} << 16) |
                   (std::uint32_t{header_[6]} << 8) | std::uint32_t{header_[7]};
      continue;
    }
    std::size_t take = std::min<std::size_t>(remaining_, bytes.size());
    remaining_ -= static_cast<std::uint32_t>(take);
    MCPCELL_TRY(sink_(stream_, bytes.substr(0, take)));
    bytes.remove_prefix(take);
  }
  return {};
}

}  // namespace mcpcell::docker
