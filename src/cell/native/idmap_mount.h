#pragma once
// Granted directories mounted as their owner's (issue 14 item 5). Run by
// root, a cell's user is a host uid of its own (cell_ids.h): without help a
// root-owned /data is not writable by it, and git calls a repository owned by
// someone else "dubious". An idmapped mount (mount_setattr(2),
// MOUNT_ATTR_IDMAP, Linux 5.12) of the grant, made by the supervisor, shows
// the directory owner's uid and primary group as the cell's host ids on that
// mount only: what the cell reads and writes there behaves as the owner's,
// and files it creates belong to the owner on the host. Every other id on the
// filesystem keeps its meaning (an identity mapping), so no file becomes more
// reachable than it is to the owner. What makes this safe to hand out:
//   - the cell can never create a setuid/setgid bit or a file capability
//     (seccomp_setid.cc), so an owner's file it writes carries no privilege;
//   - a writable grant holding a setuid/setgid file (or one with file
//     capabilities) of the owner is not mapped: a shared mmap(2) write keeps
//     the bit and the capabilities (write(2) and truncate(2) drop them), so
//     the cell could rewrite a setuid-root binary;
//   - a shared directory (sticky or world-writable: /tmp, /var/tmp) is not
//     mapped: its owner may delete and replace every other user's files;
//   - read-only grants stay read-only (the flag is set in the same call).
// Only root can idmap a filesystem owned by the initial user namespace; a
// normal user's cell is that user already, the owner of their own files.

#include <string>
#include <vector>

#include "cell/native/id_map.h"
#include "core/cell_spec.h"
#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

/// One per planned mount, same order: a detached mount tree (open_tree(2)
/// OPEN_TREE_CLONE) idmapped to the cell, with the grant's flags, which the
/// cell attaches with move_mount(2); empty where the cell binds as before.
struct IdmappedGrants {
  std::vector<UniqueFd> trees;
};

/// Maps each grant whose owner is not already the cell's host uid. A grant
/// that cannot be mapped is said in `notes` and bound as before (the cell's
/// own id), or refused when spec.idmap is kOn. Needs root for any mapping.
Result<IdmappedGrants> MapGrantsToOwners(const CellSpec& spec, const std::vector<MountSpec>& planned,
                                         const HostIds& host, std::vector<std::string>* notes);

/// uid_map/gid_map text: `from` (an id on disk) is `to` (a host id), every
/// other id is itself, but `to` on disk, which is left unmapped (its host id
/// is taken by `from`). At most four lines.
std::string IdmapLines(std::uint32_t from, std::uint32_t to);

/// Why the mount of a directory with this mode should not be mapped to its
/// owner: sticky or world-writable (shared with every user). Empty: it may.
std::string SharedDirectoryReason(unsigned mode);

/// Searches the tree below `dir` (not following symlinks, crossing mounts)
/// for what makes a writable grant unsafe to map to `uid`: a regular file
/// with S_ISUID or S_ISGID, or with file capabilities (any mode: the cell
/// could add +x), that `uid` owns or `gid` is the group of, or a shared
/// (sticky or world-writable) directory. Returns it in words with its path
/// relative to `dir`, "" when there is none, or an error when the tree has
/// more than `budget` entries, is deeper than 64 levels, or has an entry it
/// cannot stat, open or read (it could not be checked whole: fail closed).
Result<std::string> FindOwnersSetIdFile(int dir, std::uint32_t uid, std::uint32_t gid, std::size_t budget);

}  // namespace mcpcell
