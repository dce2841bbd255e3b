#pragma once
// Reading and replacing a client's config file safely. The file decides what
// runs on the user's machine, so mcpcell writes only a regular file the
// caller owns, never through a symlink, atomically (a client reading it
// meanwhile sees the old or the new file, never half of one), with the
// file's own mode kept, and leaves an owner-only backup next to it.

#include <sys/types.h>

#include <string>

#include "util/error.h"

namespace mcpcell {

struct ConfigFile {
  std::string path;
  std::string text;
  mode_t mode = 0;
  gid_t gid = 0;
  dev_t dev = 0;
  ino_t ino = 0;
};

/// Reads `path`: refuses a symlink, anything but a regular file, and a file
/// owned by another user than the caller (root included: wrap it as its owner).
Result<ConfigFile> ReadConfigFile(const std::string& path);

/// Replaces `file.path` with `text`: a temporary file in the same directory
/// with the original's mode, fsync, rename(2). Refuses when the path no
/// longer names the file that was read (changed meanwhile, or swapped for a
/// symlink).
Status ReplaceConfigFile(const ConfigFile& file, const std::string& text);

/// Writes `text` to a new file `path` (O_EXCL, mode 0600, no symlink followed).
Status WriteNewPrivateFile(const std::string& path, const std::string& text);

}  // namespace mcpcell
