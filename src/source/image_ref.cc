#include "source/image_ref.h"

namespace mcpcell {

std::string ImageRef::Reference() const {
  std::string s = repository;
  if (!tag.empty()) s += ":" + tag;
  if (!digest.empty()) s += "@" + digest;
  return s;
}

std::vector<std::string> ImageRef::LookupNames() const {
  std::vector<std::string> names;
  if (pinned()) names.push_back(repository + "@" + digest);
  // repo:tag@digest is looked up by digest alone in the engine; the tag is
  // tried separately so a locally imported image (no repo digest) is found
  // by its tag and then checked against the pin.
  if (!tag.empty()) names.push_back(repository + ":" + tag);
  else if (!pinned()) names.push_back(repository + ":latest");
  return names;
}

std::string ImageRef::PullTag() const {
  if (pinned()) return digest;
  return tag.empty() ? "latest" : tag;
}

ImageRef ImageRefFrom(const ServerRef& ref) { return ImageRef{ref.package, ref.version, ref.digest}; }

Result<ImageRef> ParseImageRef(std::string_view text) {
  std::string s(text);
  if (s.rfind("docker://", 0) != 0) s = "docker://" + s;
  auto ref = ParseServerRef(s, {});
  if (!ref) return ref.error();
  if (ref->kind != ServerRef::Kind::kDocker) return MakeError("parse image reference", std::string(text), "not an image");
  return ImageRefFrom(*ref);
}

}  // namespace mcpcell
