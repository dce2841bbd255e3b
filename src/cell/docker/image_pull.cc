#include "cell/docker/image_pull.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace mcpcell::docker {
namespace {

std::string Megabytes(std::int64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return b;
}

bool IsProgressStatus(const std::string& s) { return s == "Downloading" || s == "Extracting"; }

constexpr const char* kGetItElsewhere =
    "the engine could not pull it (no route to the registry, unknown image, or no access). Get the image into "
    "the engine another way — `docker pull` where the registry is reachable and `docker save`/`docker load`, "
    "or `docker import` of a root filesystem — or check the engine's network and proxy settings";

}  // namespace

PullProgress::PullProgress(std::string image, std::chrono::milliseconds every)
    : image_(std::move(image)), every_(every) {}

std::vector<std::string> PullProgress::Feed(std::string_view piece, Clock::time_point now) {
  std::vector<std::string> out;
  partial_.append(piece);
  std::size_t start = 0;
  for (std::size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
    Line(partial_.substr(start, nl - start), now, &out);
  }
  partial_.erase(0, start);
  return out;
}

void PullProgress::Line(const std::string& line, Clock::time_point now, std::vector<std::string>* out) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object()) return;
  if (j.contains("error")) {
    error_ = j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump();
    return;
  }
  std::string status = j.value("status", "");
  std::string id = j.contains("id") && j["id"].is_string() ? j["id"].get<std::string>() : "";
  if (status.empty()) return;
  std::string prefix = "pull " + image_ + ": ";
  if (id.empty() || status.rfind("Pulling from", 0) == 0) {
    out->push_back(prefix + status + (id.empty() || status.rfind("Pulling from", 0) == 0 ? "" : " " + id));
    return;
  }
  const auto& detail = j.contains("progressDetail") && j["progressDetail"].is_object() ? j["progressDetail"]
                                                                                       : nlohmann::json::object();
  if (IsProgressStatus(status) && detail.contains("current")) {
    bytes_[id] = {detail.value("current", std::int64_t{0}), detail.value("total", std::int64_t{0})};
  }
  bool changed = state_[id] != status;
  state_[id] = status;
  if (changed) {
    out->push_back(prefix + id + ": " + status);
    return;
  }
  if (!IsProgressStatus(status) || now - last_summary_ < every_) return;
  last_summary_ = now;
  std::int64_t cur = 0;
  std::int64_t total = 0;
  for (const auto& [layer, b] : bytes_) {
    cur += b.first;
    total += b.second;
  }
  int complete = 0;
  for (const auto& [layer, s] : state_) complete += s == "Pull complete" || s == "Already exists";
  out->push_back(prefix + Megabytes(cur) + " of " + Megabytes(total) + " (" + std::to_string(complete) + "/" +
                 std::to_string(state_.size()) + " layers complete)");
}

namespace {

enum class Lookup { kFound, kMissing };

struct Found {
  Lookup what = Lookup::kMissing;
  ImageConfig image;
  std::string mismatch;  ///< a local image under the tag that is not the pinned one
  bool mismatch_local_only = false;  ///< ... built or loaded here: no registry digest
};

Result<Found> LookUp(const EngineClient& engine, const ImageRef& ref) {
  Found f;
  for (const auto& name : ref.LookupNames()) {
    auto r = engine.Call("GET", "/images/" + name + "/json");
    if (!r) return r.error();
    if (r->status == 404) continue;
    if (r->status != 200) return MakeError("inspect image", name, EngineMessage(*r));
    auto cfg = ParseImageInspect(r->body, name);
    if (!cfg) return cfg.error();
    if (!MatchesDigest(*cfg, ref.digest)) {
      f.mismatch = "the local image " + name + " is " + cfg->id +
                   (cfg->repo_digests.empty() ? "" : " (" + cfg->repo_digests.front() + ")") +
                   ", not the pinned " + ref.digest;
      f.mismatch_local_only = cfg->repo_digests.empty();
      continue;
    }
    f.what = Lookup::kFound;
    f.image = std::move(*cfg);
    return f;
  }
  return f;
}

Status Pull(const EngineClient& engine, const ImageRef& ref, const std::function<void(const std::string&)>& say) {
  PullProgress progress(ref.Reference());
  std::string body;
  auto status = engine.Stream("POST",
                              "/images/create?fromImage=" + UrlEncode(ref.repository) +
                                  "&tag=" + UrlEncode(ref.PullTag()),
                              [&](std::string_view piece) {
                                if (body.size() < 65536) body.append(piece);
                                for (const auto& line : progress.Feed(piece, PullProgress::Clock::now())) say(line);
                              });
  if (!status) return status.error();
  if (*status != 200) {
    return MakeError("pull image", ref.Reference(), EngineMessage(HttpReply{*status, body}) + "; " + kGetItElsewhere);
  }
  // The engine reports a failed pull inside a 200 stream.
  if (!progress.error().empty()) {
    return MakeError("pull image", ref.Reference(), progress.error() + "; " + kGetItElsewhere);
  }
  return {};
}

}  // namespace

Result<ImageConfig> EnsureImage(const EngineClient& engine, const ImageRef& ref,
                                const std::function<void(const std::string&)>& say) {
  auto local = LookUp(engine, ref);
  if (!local) return local.error();
  if (local->what == Lookup::kFound) return std::move(local->image);
  // An image built or loaded here was never in a registry under this name:
  // a pull cannot bring the pinned one, and the mismatch is already certain.
  if (local->mismatch_local_only) {
    return MakeError("check image pin", ref.Reference(),
                     local->mismatch + ", and it was built or loaded here (no registry digest), so no pull was "
                     "tried; refusing to run it. Load the pinned image (docker load) or pin the local one's Id");
  }
  if (!local->mismatch.empty()) say(local->mismatch + "; pulling the pinned image");
  else say("image " + ref.Reference() + " is not in the engine; pulling it");
  if (auto pulled = Pull(engine, ref, say); !pulled) {
    if (local->mismatch.empty()) return pulled.error();
    Error e = pulled.error();
    e.detail = local->mismatch + " (refusing to run it), and " + e.detail;
    return e;
  }
  auto after = LookUp(engine, ref);
  if (!after) return after.error();
  if (after->what == Lookup::kFound) return std::move(after->image);
  return MakeError("pull image", ref.Reference(),
                   after->mismatch.empty() ? "the engine reported success but has no such image"
                                           : after->mismatch + " (refusing to run it)");
}

}  // namespace mcpcell::docker
