#include "doctor/parse.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <nlohmann/json.hpp>

namespace mcpcell::doctor {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

template <typename T>
std::optional<T> ToNumber(std::string_view s, int base = 10) {
  T value{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

// Decodes a chunked body (RFC 9112 section 7.1); nullopt if truncated.
std::optional<std::string> Dechunk(std::string_view body) {
  std::string out;
  while (true) {
    size_t eol = body.find("\r\n");
    if (eol == std::string_view::npos) return std::nullopt;
    std::string_view size_text = body.substr(0, eol);
    size_text = size_text.substr(0, size_text.find(';'));  // chunk extensions
    auto size = ToNumber<size_t>(Trim(size_text), 16);
    if (!size) return std::nullopt;
    body.remove_prefix(eol + 2);
    if (*size == 0) return out;
    if (body.size() < *size) return std::nullopt;
    out.append(body.substr(0, *size));
    body.remove_prefix(*size);
    if (body.substr(0, 2) == "\r\n") body.remove_prefix(2);
  }
}

}  // namespace

std::vector<std::string> SplitWords(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.emplace_back(s.substr(start, i - start));
  }
  return out;
}

std::optional<std::string> StatusField(std::string_view status_text, std::string_view key) {
  for (std::string_view line : Lines(status_text)) {
    if (line.size() > key.size() && line.substr(0, key.size()) == key &&
        line[key.size()] == ':') {
      return std::string(Trim(line.substr(key.size() + 1)));
    }
  }
  return std::nullopt;
}

std::optional<long> ParseSysctlInt(std::string_view content) {
  return ToNumber<long>(Trim(content));
}

std::optional<KernelVersion> ParseKernelRelease(std::string_view release) {
  // Reads up to three dot-separated numbers; whatever follows ("-generic", "-rc2") is ignored.
  auto take_number = [&release]() -> std::optional<int> {
    size_t n = 0;
    while (n < release.size() && std::isdigit(static_cast<unsigned char>(release[n]))) ++n;
    auto value = ToNumber<int>(release.substr(0, n));
    release.remove_prefix(n);
    return value;
  };
  auto take_dot = [&release]() {
    if (release.empty() || release.front() != '.') return false;
    release.remove_prefix(1);
    return true;
  };
  KernelVersion v;
  auto major = take_number();
  if (!major || !take_dot()) return std::nullopt;
  auto minor = take_number();
  if (!minor) return std::nullopt;
  v.major = *major;
  v.minor = *minor;
  if (take_dot()) v.patch = take_number().value_or(0);
  return v;
}

std::optional<HttpResponse> ParseHttpResponse(std::string_view raw) {
  size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> lines = Lines(raw.substr(0, head_end));
  if (lines.empty()) return std::nullopt;
  // Status line: "HTTP/1.1 200 OK".
  std::vector<std::string> status = SplitWords(lines[0]);
  if (status.size() < 2 || status[0].rfind("HTTP/1.", 0) != 0) return std::nullopt;
  auto code = ToNumber<int>(status[1]);
  if (!code) return std::nullopt;
  HttpResponse r;
  r.status = *code;
  for (size_t i = 1; i < lines.size(); ++i) {
    size_t colon = lines[i].find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    r.headers[Lower(Trim(lines[i].substr(0, colon)))] = std::string(Trim(lines[i].substr(colon + 1)));
  }
  std::string_view body = raw.substr(head_end + 4);
  auto te = r.headers.find("transfer-encoding");
  if (te != r.headers.end() && Lower(te->second).find("chunked") != std::string::npos) {
    auto decoded = Dechunk(body);
    if (!decoded) return std::nullopt;
    r.body = std::move(*decoded);
    return r;
  }
  auto cl = r.headers.find("content-length");
  if (cl != r.headers.end()) {
    auto len = ToNumber<size_t>(cl->second);
    if (!len || body.size() < *len) return std::nullopt;
    body = body.substr(0, *len);
  }
  r.body = std::string(body);
  return r;
}

std::string UnixSocketPathFromHost(std::string_view docker_host) {
  constexpr std::string_view kPrefix = "unix://";
  if (docker_host.substr(0, kPrefix.size()) != kPrefix) return {};
  return std::string(docker_host.substr(kPrefix.size()));
}

std::map<std::string, std::string> ParseDockerRuntimes(std::string_view json_text) {
  std::map<std::string, std::string> out;
  nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return out;
  for (const char* key : {"runtimes", "Runtimes"}) {
    auto it = doc.find(key);
    if (it == doc.end() || !it->is_object()) continue;
    for (const auto& [name, runtime] : it->items()) {
      std::string path;
      if (runtime.is_object()) {
        auto p = runtime.find("path");
        if (p != runtime.end() && p->is_string()) path = p->get<std::string>();
      }
      out[name] = path;
    }
  }
  return out;
}

std::vector<std::string> GvisorRuntimes(const std::map<std::string, std::string>& runtimes) {
  std::vector<std::string> out;
  for (const auto& [name, path] : runtimes) {
    if (name.find("runsc") != std::string::npos || path.find("runsc") != std::string::npos) {
      out.push_back(name);
    }
  }
  return out;
}

}  // namespace mcpcell::doctor
