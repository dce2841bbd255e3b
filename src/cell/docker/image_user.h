#pragma once
// An image's named USER ("node", "nonroot") as numbers, read from the image's
// own /etc/passwd and /etc/group: a name means nothing on the host, and only
// the numbers tell whether it is root under another spelling.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cell/docker/engine_client.h"
#include "util/error.h"

namespace mcpcell::docker {

/// The content of the single regular file in a tar stream (what the archive
/// endpoint returns for a file path); nullopt when the stream holds anything
/// else (a symlink, a directory, a truncated header). Pure.
std::optional<std::string> SingleFileFromTar(std::string_view tar);

/// Looks `name` up in passwd-format `text` ("name:x:uid:gid:..."): {uid, gid}. Pure.
std::optional<std::pair<std::uint32_t, std::uint32_t>> LookUpPasswd(std::string_view text, std::string_view name);

/// Looks group `name` up in group-format `text` ("name:x:gid:..."). Pure.
std::optional<std::uint32_t> LookUpGroup(std::string_view text, std::string_view name);

/// Resolves the image's USER ("name", "name:group", "uid:group"...) to
/// "uid:gid" through a created, never started, container of `image_id`
/// (GET /containers/ID/archive on /etc/passwd and /etc/group), removed again.
/// Numeric parts pass through. Fails when a name is not in the image's files.
/// `labels` go on the lookup container (mcpcell's, so gc reaps it after a kill -9).
Result<std::string> ResolveImageUser(const EngineClient& engine, const std::string& image_id,
                                     const std::string& user, const nlohmann::json& labels);

}  // namespace mcpcell::docker
