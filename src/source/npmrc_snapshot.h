#pragma once
// The npmrc files an npx:// install is judged by and made under, read once
// (adv15). Every npm process reads its config files again: the allow check
// (`npm config list -l`) and the install (`npm install`) were two reads of
// the user's npmrc, and a file that answered them differently — a FIFO, or a
// file swapped in between, in a directory some cell may write — had the
// install fetch from a registry the check never saw, recorded as public.
// So the user's and the global npmrc are copied once, into sealed memfds
// (no file: adv18, copies in the npx cache were read by a cell granted
// --read ~/.cache while another launch installed), and every later npm run
// is pointed at the copies (--userconfig, --globalconfig: flags beat every
// other layer; /proc/self/fd/N, the fds passed to npm alone). A config that
// is not a regular file is refused: nothing but a file answers the same
// twice.
//
// An owner-only directory holds the launch's own npm cache (--cache) and an
// empty project, removed with the copies: a cache shared by installs let what one install's
// registry answered (a man in the middle's packument and tarball) be served
// to a later one — kept by `--prefer-online`'s revalidation when the
// registry answers 304, or read first under `prefer-offline` (adv15). An
// install fetches everything afresh; installs happen once per version.

#include <string>
#include <vector>

#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

class NpmrcSnapshot {
 public:
  /// A new owner-only directory under `parent`, with an empty project
  /// directory and the cache; nothing copied yet.
  static Result<NpmrcSnapshot> Make(const std::string& parent);

  /// Copies `global` and `user` (absolute paths npm named; "" or one that
  /// does not exist is copied as empty: npm would read nothing there now,
  /// and must not read what appears there later).
  Status Copy(const std::string& global, const std::string& user);

  NpmrcSnapshot(NpmrcSnapshot&& o) noexcept;
  NpmrcSnapshot& operator=(NpmrcSnapshot&&) = delete;
  NpmrcSnapshot(const NpmrcSnapshot&) = delete;
  ~NpmrcSnapshot();  ///< removes the copies: they hold the user's tokens

  /// "--cache=DIR/cache", and once copied "--globalconfig=/proc/self/fd/N",
  /// "--userconfig=/proc/self/fd/M".
  std::vector<std::string> Flags() const;
  /// N and M, to be passed to npm (HostToolRun::pass_fds); none until copied.
  std::vector<int> Fds() const;
  /// "--prefix=DIR/project": an empty project for the runs that are not
  /// the install (whose prefix's .npmrc is mcpcell's), so a `.npmrc` in
  /// npm's working directory is no run's project config (adv16: `/.npmrc`
  /// was the check's and not the install's).
  /// "" until the copies are made: `--prefix` also sets npm's global
  /// prefix, from which `npm config get globalconfig` derives its answer.
  std::string ProjectFlag() const;
  /// The token-shaped pieces (url_credential.h TokenPieces) of every URL
  /// the copies name, as a registry setting's value or in a `//host/path/:`
  /// key: what npm's output must not show (adv16: a warning about an
  /// unknown `//npm.fury.io/TOKEN/acme/:always-auth` printed it).
  std::vector<std::string> UrlTokenPieces() const;

 private:
  NpmrcSnapshot() = default;
  std::string dir_;
  UniqueFd held_;  ///< util/work_dir_lock.h
  bool copied_ = false;
  UniqueFd global_;
  UniqueFd user_;
  std::string texts_;  ///< both copies, for UrlTokenPieces
};

/// Reads `npm config get globalconfig userconfig`'s output
/// ("globalconfig=/usr/etc/npmrc\nuserconfig=/root/.npmrc\n"): the two
/// absolute paths, in that order. Refused when it is not that.
Result<std::pair<std::string, std::string>> NpmrcPathsFromGet(const std::string& out);

}  // namespace mcpcell
