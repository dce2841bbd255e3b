#pragma once
// Whether a file is one only root can change, in a place the caller names:
// what may vouch for a registry (a CA bundle, source/public_sources.h) or run
// with no cell around it (a system interpreter, util/path_search.h). Both
// follow links first and judge the file they end at: a link of the
// account's own to a root file is the root file; a root link to the
// account's file is the account's.

#include <span>
#include <string>

namespace mcpcell {

/// The places a file may lie in. A real path counts when it starts with one
/// of `dirs` (each ending in '/', compared as written: a link among the
/// directories is not followed) or is the real path of one of `files`
/// (each followed, so /etc/ssl/cert.pem counts for what it links to).
struct RootPlaces {
  std::span<const char* const> dirs;
  std::span<const char* const> files;
};

/// Whether `path`, followed, is a regular file in one of `places`, and it
/// and every directory above it are owned by root and writable by no group
/// or other. A caller that runs or reads the file afterwards uses its real
/// path (std::filesystem::canonical), not `path`: a link on the way may be
/// changed after this answer.
/// False when `path` cannot be followed.
bool IsRootOnlyFile(const std::string& path, const RootPlaces& places);

}  // namespace mcpcell
