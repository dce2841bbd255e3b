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

std::string ImageUserNote(const std::string& image_user, std::uint32_t uid, std::uint32_t gid) {
  if (image_user.empty()) return "";
  return "the image's USER '" + image_user + "' is not used: the cell runs as host uid:gid " + std::to_string(uid) +
         ":" + std::to_string(gid) + ", its own for this run (give --uid/--gid to run as the image's user, which " +
         "any host user or process with that uid could then signal and trace)";
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
    std::string note = ImageUserNote(image.user, spec.uid, spec.gid);
    if (!note.empty() && notes != nullptr) notes->push_back(note);
  }
  return out;
}

}  // namespace mcpcell::docker
