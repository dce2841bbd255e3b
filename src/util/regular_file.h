#pragma once
// Reading a file whose contents mcpcell acts on once (npm's config files,
// npm's lockfiles): it must be a regular file, read whole, of a bounded
// size. A FIFO or a device could answer each reader differently, or never.

#include <cstdint>
#include <optional>
#include <string>

#include "util/error.h"

namespace mcpcell {

/// Error::detail of a path that is there but not a regular file.
inline constexpr const char* kNotRegularFile = "not a regular file";

/// The whole of `path`, or nullopt when nothing is there (ENOENT, ENOTDIR).
/// Opened O_RDONLY | O_NONBLOCK (a FIFO must not hang the open) | O_CLOEXEC
/// plus `extra_flags` (O_NOFOLLOW where a symlink is refused); anything but a
/// regular file (detail kNotRegularFile) or more than `max_bytes` is refused,
/// the error naming `what` ("read npm's lockfile") and the path.
Result<std::optional<std::string>> ReadRegularFile(const std::string& path, const std::string& what,
                                                   std::uint64_t max_bytes, int extra_flags = 0);

}  // namespace mcpcell
