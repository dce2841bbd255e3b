#include "cell/docker/image_user.h"

#include <charconv>
#include <vector>

#include <nlohmann/json.hpp>

namespace mcpcell::docker {
namespace {

constexpr std::size_t kBlock = 512;

bool ParseNumber(std::string_view s, std::uint32_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> f;
  for (std::size_t start = 0;;) {
    std::size_t colon = line.find(':', start);
    f.push_back(line.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) return f;
    start = colon + 1;
  }
}

// Calls `fn(fields)` for each line until it returns true.
template <typename Fn>
void EachLine(std::string_view text, Fn fn) {
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.front() != '#' && fn(Fields(line))) return;
    if (nl == std::string_view::npos) return;
    text.remove_prefix(nl + 1);
  }
}

// A file of the created container, through the archive endpoint.
Result<std::optional<std::string>> ReadContainerFile(const EngineClient& engine, const std::string& id,
                                                     const std::string& path) {
  auto r = engine.Call("GET", "/containers/" + id + "/archive?path=" + UrlEncode(path));
  if (!r) return r.error();
  if (r->status == 404) return std::optional<std::string>();
  if (r->status != 200) return MakeError("read image file", path, EngineMessage(*r));
  return SingleFileFromTar(r->body);
}

}  // namespace

std::optional<std::string> SingleFileFromTar(std::string_view tar) {
  if (tar.size() < kBlock) return std::nullopt;
  std::string_view header = tar.substr(0, kBlock);
  // ustar: size is octal at offset 124 (12 bytes), typeflag at 156 ('0' or NUL: a regular file).
  char type = header[156];
  if (type != '0' && type != '\0') return std::nullopt;
  std::uint64_t size = 0;
  for (char c : header.substr(124, 12)) {
    if (c == '\0' || c == ' ') break;
    if (c < '0' || c > '7') return std::nullopt;
    size = size * 8 + static_cast<std::uint64_t>(c - '0');
  }
  if (size > tar.size() - kBlock) return std::nullopt;
  return std::string(tar.substr(kBlock, size));
}

std::optional<std::pair<std::uint32_t, std::uint32_t>> LookUpPasswd(std::string_view text, std::string_view name) {
  std::optional<std::pair<std::uint32_t, std::uint32_t>> out;
  EachLine(text, [&](const std::vector<std::string_view>& f) {
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    if (f.size() < 4 || f[0] != name || !ParseNumber(f[2], &uid) || !ParseNumber(f[3], &gid)) return false;
    out = std::make_pair(uid, gid);
    return true;
  });
  return out;
}

std::optional<std::uint32_t> LookUpGroup(std::string_view text, std::string_view name) {
  std::optional<std::uint32_t> out;
  EachLine(text, [&](const std::vector<std::string_view>& f) {
    std::uint32_t gid = 0;
    if (f.size() < 3 || f[0] != name || !ParseNumber(f[2], &gid)) return false;
    out = gid;
    return true;
  });
  return out;
}

Result<std::string> ResolveImageUser(const EngineClient& engine, const std::string& image_id,
                                     const std::string& user, const nlohmann::json& labels) {
  auto colon = user.find(':');
  std::string u = user.substr(0, colon);
  std::string g = colon == std::string::npos ? "" : user.substr(colon + 1);
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  bool uid_numeric = ParseNumber(u, &uid);
  bool gid_numeric = g.empty() || ParseNumber(g, &gid);
  if (uid_numeric && gid_numeric) return user;
  // Created, never started: nothing of the image runs. No network, no command
  // of its own needed (an image without Cmd still creates with this one).
  nlohmann::json body{{"Image", image_id},
                      {"Cmd", {"/nonexistent"}},
                      {"Entrypoint", nlohmann::json::array()},
                      {"NetworkDisabled", true},
                      {"Labels", labels},
                      {"HostConfig", {{"NetworkMode", "none"}, {"AutoRemove", false}}}};
  auto created = engine.Call("POST", "/containers/create", body.dump());
  if (!created) return created.error();
  if (created->status != 201) return MakeError("inspect image user", user, EngineMessage(*created));
  auto cj = nlohmann::json::parse(created->body, nullptr, false);
  std::string id = cj.is_object() ? cj.value("Id", "") : "";
  if (id.empty()) return MakeError("inspect image user", user, "no container Id in the engine's reply");
  struct Remove {
    const EngineClient& e;
    std::string id;
    ~Remove() { (void)e.Call("DELETE", "/containers/" + id + "?force=1&v=1"); }
  } remove{engine, id};
  if (!uid_numeric) {
    auto passwd = ReadContainerFile(engine, id, "/etc/passwd");
    if (!passwd) return passwd.error();
    auto found = *passwd ? LookUpPasswd(**passwd, u) : std::nullopt;
    if (!found) return MakeError("inspect image user", user, "'" + u + "' is not in the image's /etc/passwd");
    uid = found->first;
    if (g.empty()) gid = found->second;
  }
  if (!gid_numeric) {
    auto group = ReadContainerFile(engine, id, "/etc/group");
    if (!group) return group.error();
    auto found = *group ? LookUpGroup(**group, g) : std::nullopt;
    if (!found) return MakeError("inspect image user", user, "group '" + g + "' is not in the image's /etc/group");
    gid = *found;
  }
  return std::to_string(uid) + ":" + std::to_string(gid);
}

}  // namespace mcpcell::docker
