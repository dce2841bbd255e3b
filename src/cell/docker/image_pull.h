#pragma once
// Getting a docker:// image into the engine: look it up locally, pull it
// through the Engine API when missing (progress on stderr), and hold a pinned
// reference to its digest before anything runs from it.

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cell/docker/engine_client.h"
#include "cell/docker/image_config.h"
#include "source/image_ref.h"
#include "util/error.h"

namespace mcpcell::docker {

/// Folds a pull's JSON progress stream (one object per line: status, id,
/// progressDetail, error) into a few human lines: one per layer state change
/// ("Pulling fs layer", "Download complete", "Pull complete"), the engine's
/// own summary lines ("Digest: …", "Status: …"), and, while bytes move, at
/// most one byte summary per `every`. Pure: the clock is a parameter.
class PullProgress {
 public:
  using Clock = std::chrono::steady_clock;
  explicit PullProgress(std::string image, std::chrono::milliseconds every = std::chrono::seconds(1));

  /// Takes the next piece of the stream (lines may be split across pieces);
  /// returns the lines to show now.
  std::vector<std::string> Feed(std::string_view piece, Clock::time_point now);
  /// The stream's error message ({"error": …}), "" when none came.
  const std::string& error() const { return error_; }

 private:
  void Line(const std::string& line, Clock::time_point now, std::vector<std::string>* out);

  std::string image_;
  std::chrono::milliseconds every_;
  std::string partial_;
  std::string error_;
  std::map<std::string, std::string> state_;  ///< layer id → last status
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> bytes_;  ///< layer → current, total
  Clock::time_point last_summary_{};
};

/// Finds `ref` in the engine (ImageRef::LookupNames, in order) or pulls it
/// (POST /images/create?fromImage=…&tag=…), printing progress through `say`.
/// A pinned reference must match the image's Id or one of its RepoDigests;
/// a mismatch is refused, never run. An unreachable registry is an error
/// that says so and how to get the image in another way.
Result<ImageConfig> EnsureImage(const EngineClient& engine, const ImageRef& ref,
                                const std::function<void(const std::string&)>& say);

}  // namespace mcpcell::docker
