#include "source/server_ref.h"

#include <regex>

#include <nlohmann/json.hpp>

#include "source/interpreted_script.h"

namespace mcpcell {
namespace {

constexpr std::string_view kSpellings =
    "expected npx://PKG[@VERSION], npx/PKG[@VERSION], uvx://PKG[@VERSION], "
    "docker://IMAGE[:TAG|@sha256:DIGEST], a registry name (see 'mcpcell registry list'), "
    "or a command after '--'";

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

/// Splits "pkg@ver" / "@scope/pkg@ver" at the version '@' (the one after the scope).
void SplitPackageVersion(std::string_view spec, std::string* pkg, std::string* ver) {
  std::size_t from = (!spec.empty() && spec[0] == '@') ? 1 : 0;
  std::size_t at = spec.find('@', from);
  if (at == std::string_view::npos) {
    *pkg = std::string(spec);
    ver->clear();
  } else {
    *pkg = std::string(spec.substr(0, at));
    *ver = std::string(spec.substr(at + 1));
  }
}

bool IsValidVersionSpec(std::string_view v) {
  // Versions, ranges and dist-tags; never whitespace or a leading '-' (an npm/uv
  // flag), nor what npm reads as a path: `.`, `..`, a leading '.', a name
  // ending .tgz/.tar/.tar.gz (adv11: `npx://PKG@.` made npm view read /).
  static const std::regex re(R"(^[A-Za-z0-9^~<>=*][A-Za-z0-9^~<>=.*+_|-]*$)");
  // Any case: npm-package-arg's isFileType is /[.](?:tgz|tar.gz|tar)$/i (adv13).
  static const std::regex archive(R"(\.(tgz|tar|tar\.gz)$)", std::regex::icase);
  std::string s(v);
  return !v.empty() && std::regex_match(s, re) && !std::regex_search(s, archive);
}

// uvx:// takes what it installs exactly: an exact version or none ("latest"
// = none), and no extras: the pip command line is built from these.
Result<ServerRef> CheckUvx(ServerRef ref) {
  if (ref.package.find('[') != std::string::npos) {
    return MakeError("parse server", ref.original,
                     "package extras ([...]) are not supported for uvx:// sources; install the server yourself "
                     "and run its command after --");
  }
  if (ref.version == "latest") ref.version.clear();
  if (!ref.version.empty() && !IsExactPythonVersion(ref.version)) {
    return MakeError("parse server", ref.original,
                     "'" + ref.version + "' is not an exact version; uvx:// takes one (uvx://NAME@1.2.3) or none "
                     "(the newest the index offers)");
  }
  return ref;
}

Result<ServerRef> ParsePackage(ServerRef::Kind kind, std::string_view rest, const std::string& orig) {
  ServerRef ref;
  ref.kind = kind;
  ref.original = orig;
  SplitPackageVersion(rest, &ref.package, &ref.version);
  bool name_ok = kind == ServerRef::Kind::kNpx ? IsValidNpmName(ref.package)
                                               : IsValidPypiName(ref.package);
  if (!name_ok) {
    return MakeError("parse server", orig,
                     "'" + ref.package + "' is not a valid " +
                         (kind == ServerRef::Kind::kNpx ? "npm package name (lowercase letters, digits, '-', '.', "
                                                          "'_'; an npm scope is written @scope/name)"
                                                        : "PyPI project name (letters, digits, '-', '.', '_'; "
                                                          "a letter or digit first and last)"));
  }
  if (rest.back() == '@' || (!ref.version.empty() && !IsValidVersionSpec(ref.version))) {
    return MakeError("parse server", orig,
                     "'" + ref.version + "' is not a version, range or tag (e.g. @1.2.3)");
  }
  if (kind == ServerRef::Kind::kUvx) return CheckUvx(std::move(ref));
  return ref;
}

Result<ServerRef> ParseDocker(std::string_view rest, const std::string& orig) {
  ServerRef ref;
  ref.kind = ServerRef::Kind::kDocker;
  ref.original = orig;
  std::string_view image = rest;
  std::size_t at = rest.find('@');
  if (at != std::string_view::npos) {
    ref.digest = std::string(rest.substr(at + 1));
    image = rest.substr(0, at);
    static const std::regex digest_re("^sha256:[0-9a-f]{64}$");
    if (!std::regex_match(ref.digest, digest_re)) {
      return MakeError("parse server", orig,
                       "image digest must be sha256: followed by 64 lowercase hex digits");
    }
  }
  // A ':' after the last '/' is a tag; one before it is a registry port.
  std::size_t slash = image.rfind('/');
  std::size_t colon = image.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    ref.version = std::string(image.substr(colon + 1));
    image = image.substr(0, colon);
  }
  ref.package = std::string(image);
  static const std::regex image_re(R"(^[a-z0-9]+([._:/-][a-z0-9]+)*$)");
  static const std::regex tag_re(R"(^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$)");
  if (!std::regex_match(ref.package, image_re) ||
      (!ref.version.empty() && !std::regex_match(ref.version, tag_re)) ||
      (colon != std::string_view::npos && ref.version.empty() && ref.digest.empty())) {
    return MakeError("parse server", orig,
                     "not a valid image reference; expected docker://IMAGE[:TAG|@sha256:DIGEST]");
  }
  return ref;
}

}  // namespace

bool IsValidNpmName(std::string_view name) {
  static const std::regex re(R"(^(@[a-z0-9~][a-z0-9._~-]*/)?[a-z0-9~][a-z0-9._~-]*$)");
  return name.size() <= 214 && std::regex_match(std::string(name), re);
}

bool IsExactVersion(std::string_view version) {
  static const std::regex re(R"(^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$)");
  return std::regex_match(std::string(version), re);
}

bool IsValidPypiName(std::string_view name) {
  static const std::regex re(R"(^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9,._-]+\])?$)");
  return name.size() <= 214 && std::regex_match(std::string(name), re);
}

bool IsExactPythonVersion(std::string_view version) {
  static const std::regex re(R"(^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$)");
  return version.size() <= 64 && std::regex_match(std::string(version), re);
}

std::string PublisherScope(std::string_view package) {
  if (package.empty() || package[0] != '@') return "";
  std::size_t slash = package.find('/');
  return std::string(package.substr(0, slash));
}

Result<ServerRef> ParseServerRef(const std::optional<std::string>& server,
                                 const std::vector<std::string>& command) {
  if (!server) {
    if (command.empty() || command[0].empty()) {
      return MakeError("parse server", "", std::string("no server given; ") + std::string(kSpellings));
    }
    ServerRef ref;
    ref.kind = ServerRef::Kind::kCommand;
    ref.original = command[0];
    ref.package = command[0];
    ref.args = command;
    return ref;
  }
  const std::string& s = *server;
  struct Scheme { std::string_view a, b; ServerRef::Kind kind; };
  const Scheme schemes[] = {{"npx://", "npx/", ServerRef::Kind::kNpx},
                            {"uvx://", "uvx/", ServerRef::Kind::kUvx},
                            {"docker://", "docker/", ServerRef::Kind::kDocker}};
  for (const auto& sc : schemes) {
    std::string_view rest;
    if (StartsWith(s, sc.a)) rest = std::string_view(s).substr(sc.a.size());
    else if (StartsWith(s, sc.b)) rest = std::string_view(s).substr(sc.b.size());
    else continue;
    if (rest.empty()) {
      return MakeError("parse server", s, "nothing after the scheme; " + std::string(kSpellings));
    }
    Result<ServerRef> r = sc.kind == ServerRef::Kind::kDocker ? ParseDocker(rest, s)
                                                             : ParsePackage(sc.kind, rest, s);
    if (r.ok()) r->args = command;
    return r;
  }
  static const std::regex name_re(R"(^[a-z0-9][a-z0-9._-]*$)");
  if (!std::regex_match(s, name_re)) {
    return MakeError("parse server", s, "unknown server spelling; " + std::string(kSpellings));
  }
  ServerRef ref;
  ref.kind = ServerRef::Kind::kRegistry;
  ref.original = s;
  ref.package = s;
  ref.args = command;
  return ref;
}

std::string ToString(ServerRef::Kind kind) {
  switch (kind) {
    case ServerRef::Kind::kNpx: return "npx";
    case ServerRef::Kind::kUvx: return "uvx";
    case ServerRef::Kind::kDocker: return "docker";
    case ServerRef::Kind::kRegistry: return "registry";
    case ServerRef::Kind::kCommand: return "command";
  }
  return "?";
}

std::string CanonicalSource(const ServerRef& ref) {
  switch (ref.kind) {
    case ServerRef::Kind::kNpx:
    case ServerRef::Kind::kUvx: {
      std::string s = ToString(ref.kind) + "://" + ref.package;
      if (!ref.version.empty()) s += "@" + ref.version;
      return s;
    }
    case ServerRef::Kind::kDocker: {
      std::string s = "docker://" + ref.package;
      if (!ref.version.empty()) s += ":" + ref.version;
      if (!ref.digest.empty()) s += "@" + ref.digest;
      return s;
    }
    case ServerRef::Kind::kRegistry: return "registry://" + ref.package;
    case ServerRef::Kind::kCommand: {
      // `node server.mjs` is judged as the script it runs, not as node.
      auto script = InterpretedScriptOf(ref.args, CurrentDirectory());
      return script ? script->source : PlainCommandSource(ref.package, CurrentDirectory());
    }
  }
  return "";
}

nlohmann::json ToJson(const ServerRef& ref) {
  nlohmann::json j{{"kind", ToString(ref.kind)}, {"original", ref.original},
                   {"package", ref.package}, {"source", CanonicalSource(ref)}};
  if (!ref.version.empty()) j["version"] = ref.version;
  if (!ref.digest.empty()) j["digest"] = ref.digest;
  return j;
}

}  // namespace mcpcell
