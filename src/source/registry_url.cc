#include "source/registry_url.h"

#include <algorithm>
#include <cctype>

namespace mcpcell {

std::string WhatwgCleaned(std::string_view url) {
  auto edge = [](char c) { return static_cast<unsigned char>(c) <= 0x20; };
  while (!url.empty() && edge(url.front())) url.remove_prefix(1);
  while (!url.empty() && edge(url.back())) url.remove_suffix(1);
  std::string out;
  for (char c : url) {
    if (c != '\t' && c != '\n' && c != '\r') out += c;
  }
  return out;
}

Result<std::string> NormalizeRegistryUrl(std::string_view raw) {
  std::string cleaned = WhatwgCleaned(raw);
  std::string_view url = cleaned;
  std::size_t colon = url.find(':');
  std::string scheme(url.substr(0, colon == std::string_view::npos ? 0 : colon));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
  if (scheme != "http" && scheme != "https") {
    return MakeError("read npm's registry", "", "it is not an http:// or https:// URL (npm's registry setting)");
  }
  std::size_t start = colon + 1;
  while (start < url.size() && (url[start] == '/' || url[start] == '\\')) ++start;
  std::size_t end = url.find_first_of("/\\?#", start);
  std::string_view authority = url.substr(start, end == std::string_view::npos ? url.npos : end - start);
  if (std::size_t at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
  // No host (`https://user:pw@/h/p`): npm's WHATWG reader refuses it, and
  // written back as `https:///h/p` it would read as another URL (fuzzing).
  if (authority.empty()) return MakeError("read npm's registry", "", "the URL names no host");
  std::string rest(end == std::string_view::npos ? std::string_view() : url.substr(end));
  std::replace(rest.begin(), rest.end(), '\\', '/');
  return scheme + "://" + std::string(authority) + rest;
}

std::string RegistryOrigin(std::string_view normalized) {
  std::size_t start = normalized.find("://");
  if (start == std::string_view::npos) return std::string(normalized);
  std::size_t end = normalized.find_first_of("/?#", start + 3);
  return std::string(normalized.substr(0, end));
}

std::string WithTrailingSlash(std::string url) {
  if (url.empty() || url.back() != '/') url += '/';
  return url;
}

}  // namespace mcpcell
