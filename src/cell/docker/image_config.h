#pragma once
// What an image says about how it runs (GET /images/NAME/json → Config), and
// how a CellSpec for a docker:// source is completed from it: the argv the
// way `docker run IMAGE ARGS` builds it, the image's environment under the
// spec's, its working directory; its USER is noted, not used. Pure; unit-tested.

#include <cstdint>
#include <string>
#include <vector>

#include "core/cell_spec.h"
#include "util/error.h"

namespace mcpcell::docker {

/// Size of the tmpfs that stands in for each image VOLUME.
inline constexpr std::uint64_t kImageVolumeBytes = 64ULL << 20;

struct ImageConfig {
  std::string id;                         ///< "sha256:…" (the config digest)
  std::vector<std::string> repo_digests;  ///< "repo@sha256:…" for images pulled from a registry
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::vector<std::string> env;           ///< "NAME=VALUE"
  std::string workdir;
  std::string user;                       ///< as the image says: "", "0", "1000:1000", "node", ...
  std::vector<std::string> volumes;       ///< Config.Volumes: paths the engine would back with anonymous volumes
};

/// Parses an image inspect reply; `name` is for the error message.
Result<ImageConfig> ParseImageInspect(const std::string& body, const std::string& name);

/// True when `digest` ("sha256:…") is the image's Id or the digest part of one of its RepoDigests.
bool MatchesDigest(const ImageConfig& image, const std::string& digest);

/// `docker run IMAGE ARGS`: Entrypoint + (ARGS if any, else Cmd). Empty when the image names nothing to run.
std::vector<std::string> ImageArgv(const ImageConfig& image, const std::vector<std::string>& args);

/// Why the image's USER (any: root, a name, a number) is not the cell's: the
/// cell runs as `uid`:`gid`, a host id claimed for this run (cell_ids.h).
/// Keeping a numeric USER would run the cell as whatever host user has that
/// number (1000 is a real user on many machines), who could then read its
/// secret through /proc/PID/root and signal it. The cost: files of the image
/// that only its USER may read (0600/0700) are out of reach; the root
/// filesystem is read-only anyway and the home a fresh tmpfs of the cell's.
/// Empty when the image names no USER. Pure.
std::string ImageUserNote(const std::string& image_user, std::uint32_t uid, std::uint32_t gid);

struct ImageSpecOptions {
  bool user_given = false;  ///< --uid/--gid were given: they are the cell's ids as they stand
};

/// `spec` completed from `image`: argv (spec.argv are the run's args after --),
/// env (the image's, then the spec's on top), workdir (the spec's if set, else
/// the image's, else "/"), spec's uid/gid kept; each image VOLUME the spec does not
/// mount gets a size-capped tmpfs (else the engine would create an anonymous
/// volume: writable storage on the host's disk that nobody asked for).
/// Fails when there is nothing to run.
Result<CellSpec> SpecForImage(const CellSpec& spec, const ImageConfig& image, const ImageSpecOptions& opts,
                              std::vector<std::string>* notes);

}  // namespace mcpcell::docker
