#include "source/lockfile_scrub.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include <nlohmann/json.hpp>

#include "util/regular_file.h"
#include "util/unique_fd.h"
#include "util/write_all.h"

namespace mcpcell {
namespace {

// Far above a real tree's lockfile (100k packages); a larger one refuses the
// install instead of parsing into gigabytes (the disk budget allows 1 GiB).
constexpr std::uint64_t kMaxLockfile = 64ULL << 20;

bool Scrub(std::string* s, const std::vector<std::string>& pieces) {
  bool changed = false;
  for (const auto& piece : pieces) {
    if (piece.empty()) continue;
    for (std::size_t at = s->find(piece); at != std::string::npos; at = s->find(piece, at)) {
      s->replace(at, piece.size(), kScrubbedToken);
      at += std::string_view(kScrubbedToken).size();
      changed = true;
    }
  }
  return changed;
}

bool ScrubValue(nlohmann::json* v, const std::vector<std::string>& pieces) {
  bool changed = false;
  if (v->is_string()) return Scrub(v->get_ptr<std::string*>(), pieces);
  if (v->is_array()) {
    for (auto& e : *v) changed |= ScrubValue(&e, pieces);
  } else if (v->is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto& [key, value] : v->items()) {
      std::string k = key;
      changed |= Scrub(&k, pieces);
      changed |= ScrubValue(&value, pieces);
      out[k] = std::move(value);
    }
    *v = std::move(out);
  }
  return changed;
}

// Written beside and renamed over: a reader sees the old file or the new.
Status WriteLockfile(const std::string& path, const std::string& text) {
  std::string tmp = path + ".mcpcell-scrub";
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) return ErrnoError("rewrite npm's lockfile", tmp);
  Status wrote = WriteAll(fd.get(), text, "rewrite npm's lockfile", tmp);
  if (wrote.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) wrote = ErrnoError("rewrite npm's lockfile", path);
  if (!wrote.ok()) (void)::unlink(tmp.c_str());
  return wrote;
}

// A lockfile's nesting follows npm's layout (a few levels); the walk below
// and the writer recurse, so a deeper text is refused before it is parsed.
constexpr int kMaxDepth = 256;

bool NestedDeeperThan(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace

Result<std::string> ScrubJsonText(const std::string& text, const std::vector<std::string>& pieces) {
  if (NestedDeeperThan(text, kMaxDepth)) {
    return MakeError("read npm's lockfile", "", "nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return MakeError("read npm's lockfile", "", "not JSON");
  if (!ScrubValue(&doc, pieces)) return text;
  return doc.dump(2) + "\n";
}

Status ScrubLockfiles(const std::string& prefix, const std::vector<std::string>& pieces) {
  if (pieces.empty()) return {};
  for (const std::string& path : {prefix + "/package-lock.json", prefix + "/node_modules/.package-lock.json"}) {
    // Not followed: a link would have the scrub rewrite its target.
    auto text = ReadRegularFile(path, "read npm's lockfile", kMaxLockfile, O_NOFOLLOW);
    if (!text.ok()) return text.error();
    if (!text->has_value()) continue;
    auto scrubbed = ScrubJsonText(**text, pieces);
    if (!scrubbed.ok()) return MakeError("remove the registry's token from npm's lockfile", path, scrubbed.error().Message());
    if (*scrubbed != **text) MCPCELL_TRY(WriteLockfile(path, *scrubbed));
  }
  return {};
}

}  // namespace mcpcell
