#include "registry/catalog.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "util/json_input.h"
#include "util/nearest.h"

namespace mcpcell {
namespace {

using nlohmann::json;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// An optional member: absent → `fallback`; present with another type → an
// error naming its path. (json::value() threw type_error 302 on, e.g.,
// "transport": [], ending mcpcell; found by the catalog fuzz target.)
Result<std::string> OptString(const std::string& origin, const std::string& path, const json& j,
                              const char* key, const char* fallback) {
  if (!j.contains(key)) return std::string(fallback);
  return JsonString(origin, JsonChild(path, key), j[key], /*nonempty=*/false);
}

Result<bool> OptBool(const std::string& origin, const std::string& path, const json& j, const char* key) {
  if (!j.contains(key)) return false;
  return JsonBool(origin, JsonChild(path, key), j[key]);
}

Result<std::vector<RegistryEnvVar>> ReadEnvVars(const std::string& origin, const std::string& path,
                                                const json& j) {
  if (!j.is_array()) return JsonTypeError(origin, path, "an array of {name, description, required, secret}", j);
  std::vector<RegistryEnvVar> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    std::string p = JsonChild(path, i);
    MCPCELL_TRY(CheckObjectKeys(origin, p, j[i], {"name", "description", "required", "secret", "default"}));
    RegistryEnvVar v;
    if (!j[i].contains("name")) return JsonPathError(origin, p, "missing \"name\"");
    auto name = JsonString(origin, JsonChild(p, "name"), j[i]["name"]);
    if (!name.ok()) return name.error();
    v.name = *name;
    auto description = OptString(origin, p, j[i], "description", "");
    if (!description.ok()) return description.error();
    v.description = *description;
    auto required = OptBool(origin, p, j[i], "required");
    if (!required.ok()) return required.error();
    v.required = *required;
    auto secret = OptBool(origin, p, j[i], "secret");
    if (!secret.ok()) return secret.error();
    v.secret = *secret;
    if (j[i].contains("default")) {
      auto d = JsonString(origin, JsonChild(p, "default"), j[i]["default"], /*nonempty=*/false);
      if (!d.ok()) return d.error();
      if (v.secret) {
        return JsonPathError(origin, JsonChild(p, "default"),
                             "a secret cannot have a default (a value in the catalog is no secret); remove it");
      }
      v.default_value = *d;
    }
    out.push_back(std::move(v));
  }
  return out;
}

// "source" (or ToolHive's "image") as a typed reference.
Result<ServerRef> ReadSource(const std::string& origin, const std::string& path, const json& j) {
  std::string src;
  if (j.contains("source")) {
    auto s = JsonString(origin, JsonChild(path, "source"), j["source"]);
    if (!s.ok()) return s.error();
    src = *s;
  } else if (j.contains("image")) {
    auto s = JsonString(origin, JsonChild(path, "image"), j["image"]);
    if (!s.ok()) return s.error();
    src = "docker://" + *s;
  } else {
    return JsonPathError(origin, path, "missing \"source\" (npx://PKG@VERSION, uvx://..., docker://...) or \"image\"");
  }
  auto ref = ParseServerRef(src, {});
  if (!ref.ok() || ref->kind == ServerRef::Kind::kRegistry) {
    return JsonPathError(origin, JsonChild(path, "source"),
                         "\"" + src + "\" is not an npx://, uvx:// or docker:// source");
  }
  return *ref;
}

// The descriptive strings: tier, status, transport, repository, usage, tags.
Status ReadDescriptive(const std::string& origin, const std::string& path, const json& j, RegistryEntry* e) {
  auto description = OptString(origin, path, j, "description", "");
  if (!description.ok()) return description.error();
  e->description = *description;
  auto tier = OptString(origin, path, j, "tier", "community");
  if (!tier.ok()) return tier.error();
  e->tier = Lower(*tier);
  if (e->tier != "official" && e->tier != "verified" && e->tier != "community") {
    return JsonPathError(origin, JsonChild(path, "tier"), "expected official, verified or community");
  }
  auto status = OptString(origin, path, j, "status", "active");
  if (!status.ok()) return status.error();
  e->status = Lower(*status);
  auto transport = OptString(origin, path, j, "transport", "stdio");
  if (!transport.ok()) return transport.error();
  e->transport = *transport;
  auto repository_url = OptString(origin, path, j, "repository_url", "");
  if (!repository_url.ok()) return repository_url.error();
  e->repository_url = *repository_url;
  auto usage = OptString(origin, path, j, "usage", "");
  if (!usage.ok()) return usage.error();
  e->usage = *usage;
  if (j.contains("tags")) {
    auto t = JsonStringList(origin, JsonChild(path, "tags"), j["tags"]);
    if (!t.ok()) return t.error();
    e->tags = std::move(*t);
  }
  return {};
}

// What the server is started with: env vars, permissions, path args, args.
Status ReadLaunchKeys(const std::string& origin, const std::string& path, const std::string& name, const json& j,
                      RegistryEntry* e) {
  if (j.contains("env_vars")) {
    auto v = ReadEnvVars(origin, JsonChild(path, "env_vars"), j["env_vars"]);
    if (!v.ok()) return v.error();
    e->env_vars = std::move(*v);
  }
  if (j.contains("permissions")) {
    auto p = ProfileFromJson(j["permissions"], origin, JsonChild(path, "permissions"));
    if (!p.ok()) return p.error();
    e->permissions = std::move(*p);
  }
  e->permissions.name = "registry:" + name;
  if (j.contains("path_args")) {
    auto pa = JsonString(origin, JsonChild(path, "path_args"), j["path_args"]);
    if (!pa.ok()) return pa.error();
    if (*pa != "read" && *pa != "write") {
      return JsonPathError(origin, JsonChild(path, "path_args"), "expected \"read\" or \"write\"");
    }
    e->path_args = *pa;
  }
  if (j.contains("args")) {
    auto a = JsonStringList(origin, JsonChild(path, "args"), j["args"]);
    if (!a.ok()) return a.error();
    e->args = std::move(*a);
  }
  return {};
}

// mcpcell's own keys: a notice said at launch, and what the host must have.
Status ReadHostNeeds(const std::string& origin, const std::string& path, const json& j, RegistryEntry* e) {
  auto notice = OptString(origin, path, j, "notice", "");
  if (!notice.ok()) return notice.error();
  e->notice = *notice;
  if (j.contains("requires_paths")) {
    auto r = JsonStringList(origin, JsonChild(path, "requires_paths"), j["requires_paths"]);
    if (!r.ok()) return r.error();
    for (const auto& p : *r) {
      if (p.empty() || p[0] != '/') return JsonPathError(origin, JsonChild(path, "requires_paths"), "\"" + p + "\" is not an absolute path");
    }
    e->requires_paths = std::move(*r);
  }
  auto hint = OptString(origin, path, j, "requires_hint", "");
  if (!hint.ok()) return hint.error();
  e->requires_hint = *hint;
  return {};
}

Result<RegistryEntry> ReadEntry(const std::string& origin, const std::string& path,
                                const std::string& name, const json& j) {
  // Our keys (ToolHive's "args" and env_vars' "default" are used, as ToolHive
  // does), then ToolHive registry keys we accept and ignore (metadata only).
  MCPCELL_TRY(CheckObjectKeys(
      origin, path, j,
      {"description", "source", "image", "tier", "status", "transport", "repository_url", "usage",
       "tags", "env_vars", "permissions", "path_args", "args", "notice", "requires_paths", "requires_hint", "tools", "metadata", "provenance",
       "target_port", "docker_tags", "custom_metadata", "name", "title", "overview"}));
  RegistryEntry e;
  e.name = name;
  auto ref = ReadSource(origin, path, j);
  if (!ref.ok()) return ref.error();
  e.source = *ref;
  MCPCELL_TRY(ReadDescriptive(origin, path, j, &e));
  MCPCELL_TRY(ReadLaunchKeys(origin, path, name, j, &e));
  MCPCELL_TRY(ReadHostNeeds(origin, path, j, &e));
  return e;
}

}  // namespace

const RegistryEntry* Catalog::Find(std::string_view name) const {
  for (const auto& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

const RegistryEntry* Catalog::FindBySource(const ServerRef& ref) const {
  for (const auto& e : entries_) {
    if (e.source.kind == ref.kind && e.source.package == ref.package) return &e;
  }
  return nullptr;
}

Result<Catalog> ParseCatalog(std::string_view text, const std::string& origin) {
  auto doc = ParseJsonText(text, origin);
  if (!doc.ok()) return doc.error();
  MCPCELL_TRY(CheckObjectKeys(origin, "$", *doc,
                              {"$schema", "version", "last_updated", "servers", "remote_servers", "groups"}));
  if (!doc->contains("servers") || !(*doc)["servers"].is_object()) {
    return JsonPathError(origin, "$.servers", "expected an object of NAME: entry");
  }
  std::vector<RegistryEntry> entries;
  for (const auto& [name, entry] : (*doc)["servers"].items()) {
    auto e = ReadEntry(origin, JsonChild("$.servers", name), name, entry);
    if (!e.ok()) return e.error();
    entries.push_back(std::move(*e));
  }
  std::sort(entries.begin(), entries.end(),
            [](const RegistryEntry& a, const RegistryEntry& b) { return a.name < b.name; });
  return Catalog(std::move(entries));
}

Result<Catalog> BundledCatalog() { return ParseCatalog(BundledCatalogJson(), "bundled registry"); }

std::vector<std::string> Catalog::Suggest(const std::string& word) const {
  std::vector<std::string> names;
  for (const auto& e : entries_) names.push_back(e.name);
  auto near = Nearest(Lower(word), names);
  if (!near.empty() || word.size() < 3) return near;
  for (const auto& e : entries_) {
    bool mentioned = Lower(e.description).find(Lower(word)) != std::string::npos;
    for (const auto& t : e.tags) mentioned = mentioned || Lower(t) == Lower(word);
    if (mentioned && near.size() < 3) near.push_back(e.name);
  }
  return near;
}

std::string NotARegistryName(const Catalog& catalog, const std::string& word) {
  auto near = catalog.Suggest(word);
  std::string out = "is not a registry name";
  if (near.empty()) {
    out += " and none is close";
  } else {
    out += "; nearest:";
    for (std::size_t i = 0; i < near.size(); ++i) out += (i ? ", " : " ") + near[i];
  }
  return out + " (all: 'mcpcell registry list'). A server you installed yourself runs as a command after --: "
               "mcpcell run --isolate -- COMMAND [ARGS]";
}

}  // namespace mcpcell
