#pragma once
// Paths Podman's compat API cannot be trusted to mount as written.
//
// Podman (4.3) does not take HostConfig.Mounts as structured data: it joins
// each entry into a `--mount type=bind,source=S,destination=T,...` string
// and parses it again, splitting on ','. A repeated `src=` is not refused
// and the last one wins, so a granted directory named "/srv/in,src=/etc" is
// mounted as the host's /etc: every check mcpcell made (credential
// refusals, masks, the swap check) was made on a path the engine does not
// mount (adv23). HostConfig.Tmpfs is joined as "TARGET:OPTIONS" and split
// on ':'. So a bind source or target, or a tmpfs target, holding a
// character either parser gives a meaning is refused for Podman, not
// quoted: ',' (option separator), ':' (target/options separator, and the
// -v syntax), '"' and '\'' (quoting, where a version splits with a CSV reader
// parse with), and control characters (a newline ends a CSV record). '=' is
// left: each option is split at its first '=' only, so "source=/a=b" is the
// path "/a=b". Docker takes Mounts and Tmpfs keys as JSON values and needs
// none of this.

#include <string>
#include <string_view>

#include "util/error.h"

namespace mcpcell::docker {

/// Ok when `path` reaches Podman's mount parser as one value; else an Error
/// naming `role` ("bind source", "tmpfs target", ...), the path and why.
Status CheckPodmanMountPath(std::string_view role, const std::string& path);

}  // namespace mcpcell::docker
