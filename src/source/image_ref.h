#pragma once
// ImageRef: a docker:// source as the container engine needs it — repository,
// tag, digest — and the names it may be found under locally. A digest makes
// the reference pinned: the image that runs must have exactly that digest
// (its manifest digest in RepoDigests, or its image Id for a locally built
// image that no registry ever saw).

#include <string>
#include <string_view>
#include <vector>

#include "source/server_ref.h"
#include "util/error.h"

namespace mcpcell {

struct ImageRef {
  std::string repository;  ///< e.g. "mcp/fetch", "ghcr.io/github/github-mcp-server", "localhost:5000/x"
  std::string tag;         ///< "" = none given (the engine's "latest" unless a digest is given)
  std::string digest;      ///< "sha256:<64 hex>" or ""

  bool pinned() const { return !digest.empty(); }
  /// "repo[:tag][@digest]", what the user meant, for messages and the audit log.
  std::string Reference() const;
  /// The names to look the image up under locally, most specific first:
  /// repo@digest (when pinned), repo:tag (tag or "latest" when no digest).
  std::vector<std::string> LookupNames() const;
  /// The `tag` parameter of a pull (POST /images/create?fromImage=REPO&tag=T):
  /// the digest when pinned (the registry then serves exactly that manifest), else the tag or "latest".
  std::string PullTag() const;
};

/// The image reference of a docker:// ServerRef (kind kDocker).
ImageRef ImageRefFrom(const ServerRef& ref);

/// Parses "IMAGE[:TAG][@sha256:DIGEST]" (with or without "docker://"), with
/// the same rules as ParseServerRef.
Result<ImageRef> ParseImageRef(std::string_view text);

}  // namespace mcpcell
