// libFuzzer target: the Docker attach stream as the engine sends it
// (src/cell/docker/frame_demux.cc). The first input byte picks how the stream
// is cut into reads; the rest is the stream. Besides memory errors it checks
// the demuxer's promise: however the socket cuts the bytes, the same payload
// reaches each stream, and the same error (or none) ends it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cell/docker/frame_demux.h"

namespace {

struct Outcome {
  std::string out[3];
  bool ok = true;
  bool at_boundary = true;
};

Outcome Demux(std::string_view stream, std::size_t chunk) {
  Outcome o;
  mcpcell::docker::FrameDemux demux([&o](int s, std::string_view d) -> mcpcell::Status {
    if (s < 0 || s > 2) std::abort();  // the demuxer refuses unknown stream numbers
    o.out[s].append(d);
    return {};
  });
  while (!stream.empty() && o.ok) {
    std::size_t take = chunk < stream.size() ? chunk : stream.size();
    o.ok = demux.Feed(stream.substr(0, take)).ok();
    stream.remove_prefix(take);
  }
  o.at_boundary = demux.AtFrameBoundary();
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::size_t chunk = std::size_t{data[0]} % 17 + 1;
  std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
  Outcome whole = Demux(stream, stream.size() + 1);
  Outcome cut = Demux(stream, chunk);
  if (whole.ok != cut.ok) std::abort();
  if (whole.ok && (whole.out[0] != cut.out[0] || whole.out[1] != cut.out[1] || whole.out[2] != cut.out[2] || whole.at_boundary != cut.at_boundary)) {
    std::abort();
  }
  return 0;
}
