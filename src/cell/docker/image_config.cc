#include "cell/docker/image_config.h"

#include <algorithm>
#include <charconv>

#include <nlohmann/json.hpp>

namespace mcpcell::docker {
namespace {

std::vector<std::string> Strings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key) || !j[key].is_array()) return out;  // null: the image does not set it
  for (const auto& s : j[key]) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

std::string String(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

bool ParseId(std::string_view s, std::uint32_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

Result<ImageConfig> ParseImageInspect(const std::string& body, const std::string& name) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("Id") || !j["Id"].is_string()) {
    return MakeError("inspect image", name, "the engine's reply has no image Id");
  }
  ImageConfig c;
  c.id = j["Id"].get<std::string>();
  c.repo_digests = Strings(j, "RepoDigests");
  if (j.contains("Config") && j["Config"].is_object()) {
    const auto& cfg = j["Config"];
    c.entrypoint = Strings(cfg, "Entrypoint");
    c.cmd = Strings(cfg, "Cmd");
    c.env = Strings(cfg, "Env");
    c.workdir = String(cfg, "WorkingDir");
    c.user = String(cfg, "User");
    if (cfg.contains("Volumes") && cfg["Volumes"].is_object()) {
      for (const auto& [path, unused] : cfg["Volumes"].items()) c.volumes.push_back(path);
    }
  }
  return c;
}

bool MatchesDigest(const ImageConfig& image, const std::string& digest) {
  if (digest.empty()) return true;
  if (image.id == digest) return true;
  for (const auto& rd : image.repo_digests) {
    auto at = rd.rfind('@');
    if (at != std::string::npos && rd.substr(at + 1) == digest) return true;
  }
  return false;
}

std::vector<std::string> ImageArgv(const ImageConfig& image, const std::vector<std::string>& args) {
  std::vector<std::string> argv = image.entrypoint;
  const auto& tail = args.empty() ? image.cmd : args;
  argv.insert(argv.end(), tail.begin(), tail.end());
  return argv;
}

CellUser ImageUser(const std::string& image_user, std::uint32_t fallback_uid, std::uint32_t fallback_gid) {
  CellUser u{fallback_uid, fallback_gid, ""};
  std::string who = std::to_string(fallback_uid) + ":" + std::to_string(fallback_gid);
  if (image_user.empty()) {
    u.note = "the image names no USER (it would run as root); running as " + who;
    return u;
  }
  auto colon = image_user.find(':');
  std::string user = image_user.substr(0, colon);
  std::string group = colon == std::string::npos ? "" : image_user.substr(colon + 1);
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  if (!ParseId(user, &uid) || (!group.empty() && !ParseId(group, &gid))) {
    u.note = "the image's USER '" + image_user + "' is a name mcpcell could not resolve to a uid (it could be "
             "root by another name); running as " + who + " (give --uid/--gid to choose)";
    return u;
  }
  if (uid == 0) {
    u.note = "the image's USER is root; running as " + who;
    return u;
  }
  // A bare uid would get the passwd group or gid 0 from the engine; gid 0
  // opens root-group files, so the cell's group is the uid's number instead.
  u.uid = uid;
  u.gid = group.empty() || gid == 0 ? uid : gid;
  return u;
}

Result<CellSpec> SpecForImage(const CellSpec& spec, const ImageConfig& image, const ImageSpecOptions& opts,
                              std::vector<std::string>* notes) {
  CellSpec out = spec;
  out.argv = ImageArgv(image, spec.argv);
  if (out.argv.empty()) {
    return MakeError("image command", image.id,
                     "the image has no Entrypoint or Cmd: give the command after -- "
                     "(mcpcell run docker://IMAGE -- COMMAND ARGS)");
  }
  std::map<std::string, std::string> env;
  for (const auto& kv : image.env) {
    auto eq = kv.find('=');
    if (eq != std::string::npos && eq != 0) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : spec.env) env[k] = v;
  out.env = std::move(env);
  if (out.workdir.empty()) out.workdir = image.workdir.empty() ? "/" : image.workdir;
  for (const auto& v : image.volumes) {
    bool mounted = std::any_of(out.mounts.begin(), out.mounts.end(), [&](const MountSpec& m) { return m.target == v; });
    if (mounted || v.empty() || v.front() != '/') continue;
    out.mounts.push_back(MountSpec{MountSpec::Kind::kTmpfs, "", v, true, false, kImageVolumeBytes, "image volume"});
    if (notes != nullptr) notes->push_back("image VOLUME " + v + ": a tmpfs (not an engine volume on disk)");
  }
  if (!opts.user_given) {
    CellUser u = ImageUser(image.user, spec.uid, spec.gid);
    out.uid = u.uid;
    out.gid = u.gid;
    if (!u.note.empty() && notes != nullptr) notes->push_back(u.note);
  }
  return out;
}

}  // namespace mcpcell::docker
