#pragma once
// Opening a bind source once, without following symlinks, and checking that
// the object opened is the one mcpcell checked (issue 10 item 3). The spec
// holds resolved paths (realpath at lowering, after the credential check);
// between that check and the bind another process — another cell with
// --write on a parent — can swap a component for a symlink to ~/.ssh, or
// rename another directory into place. Binding the path again would follow
// the swap; binding the object opened here, after it passed, does not.

#include <string>

#include "core/cell_spec.h"
#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

/// Opens `path` (absolute) as O_PATH, refusing if any component is a
/// symlink or a magic link: openat2(2) RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS,
/// or, on kernels before 5.6, a walk of the components with O_NOFOLLOW.
Result<UniqueFd> OpenNoSymlinks(const std::string& path);

/// The fallback of OpenNoSymlinks for kernels without openat2, public so a
/// test runs it on kernels that have openat2.
Result<UniqueFd> OpenNoSymlinksByWalk(const std::string& path);

/// The device and inode of `path` (symlinks followed, as realpath did), for
/// MountSpec::source_dev/source_ino at lowering time.
Status RecordSourceIdentity(MountSpec* m);

/// Opens `m.source` with OpenNoSymlinks and checks the object: still at the
/// path that was checked (its /proc/self/fd link), and the same device and
/// inode recorded at lowering. Every refusal names the path and why.
Result<UniqueFd> OpenCheckedBindSource(const MountSpec& m);

/// OpenCheckedBindSource, for a backend that binds by path (docker, podman):
/// the same refusals, nothing kept open.
Status CheckBindSource(const MountSpec& m);

/// For an engine that binds by path, run by root: cells started by root
/// write as `cell_uid` (host nobody), so a source that such a cell could
/// swap — a component whose parent directory that uid can write (and, in a
/// sticky directory, that it owns) — is refused: the engine would follow
/// the swap after every check mcpcell can make.
Status CheckNotSwappableBy(const std::string& path, uid_t cell_uid);

/// The same for every cell root starts: refuses a source a directory on whose
/// path is writable by a per-run cell uid (cell_ids.h) or by everyone.
Status CheckNotSwappableByCells(const std::string& path);

}  // namespace mcpcell
