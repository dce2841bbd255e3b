#pragma once
// A settings file for a host tool that is no file: a memfd holding the text,
// sealed against every change, passed to the tool (close-on-exec here, kept
// for that tool alone: source/host_run.h HostToolRun::pass_fds) and named to
// it as /proc/self/fd/N. A file of ours in a directory a cell may be
// granted a read of is a file that cell reads while it exists (adv18: npm's
// config copies under ~/.cache, tokens and all).

#include <string>
#include <string_view>

#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

/// A close-on-exec memfd holding `text`, sealed (no write, grow or shrink):
/// every reader reads the same. `name` shows in /proc/PID/fd's link.
Result<UniqueFd> SealedMemfd(const char* name, std::string_view text);

/// "/proc/self/fd/N": the path under which the process given `fd` opens it.
std::string OwnFdPath(int fd);

}  // namespace mcpcell
