#include "client/config_edit.h"

#include <optional>

#include <nlohmann/json.hpp>

#include "client/jsonc.h"

namespace mcpcell {
namespace {

using nlohmann::ordered_json;

struct Located {
  std::string name;
  Span span;
  ordered_json value;
};

/// The entries of the servers object whose value starts at `at` in `plain`,
/// each named `prefix` + its name. Duplicate names are refused: a client
/// takes one of them, and which one is its own business.
Status ReadGroup(const std::string& text, const std::string& plain, std::size_t at, const std::string& key,
                 const std::string& prefix, std::vector<Located>* out) {
  auto servers = ObjectMembers(plain, at);
  if (!servers.ok()) return MakeError("read \"" + key + "\"", "", servers.error().detail);
  std::size_t first = out->size();
  for (const auto& m : *servers) {
    for (std::size_t i = first; i < out->size(); ++i) {
      if ((*out)[i].name == prefix + m.key) {
        return MakeError("read \"" + key + "\"", "", "server \"" + m.key + "\" appears twice (lines " +
                         std::to_string(LineOf(text, (*out)[i].span.begin)) + " and " +
                         std::to_string(LineOf(text, m.value.begin)) + "): keep one");
      }
    }
    ordered_json v = ordered_json::parse(plain.substr(m.value.begin, m.value.end - m.value.begin), nullptr, false);
    if (v.is_discarded()) return MakeError("read server", m.key, "its entry is not valid JSON");
    out->push_back({prefix + m.key, m.value, std::move(v)});
  }
  return {};
}

/// The one member `key` of `members`, nullptr if none; two are refused:
/// JSON.parse (most clients) takes the last, other parsers the first, so
/// wrapping one could leave the one the client runs.
Result<const Member*> OnlyMember(const std::vector<Member>& members, const std::string& key) {
  const Member* found = nullptr;
  for (const auto& m : members) {
    if (m.key != key) continue;
    if (found != nullptr) return MakeError("read \"" + key + "\"", "", "the key appears twice in one object: keep one");
    found = &m;
  }
  return found;
}

/// The entries under top-level `key`, with their spans in `text`; none when
/// the key is absent. With `project_scopes` (Claude Code's ~/.claude.json),
/// also those under projects.<dir>.<key>, named "<dir>: NAME".
Result<std::vector<Located>> LocateServers(const std::string& text, const std::string& key, bool project_scopes) {
  auto plain = BlankJsoncExtras(text);
  if (!plain.ok()) return plain.error();
  auto top = TopValue(*plain);
  if (!top.ok()) return top.error();
  auto members = ObjectMembers(*plain, top->begin);
  if (!members.ok()) return members.error();
  std::vector<Located> out;
  auto servers = OnlyMember(*members, key);
  if (!servers.ok()) return servers.error();
  if (*servers != nullptr) MCPCELL_TRY(ReadGroup(text, *plain, (*servers)->value.begin, key, "", &out));
  if (!project_scopes) return out;
  auto projects = OnlyMember(*members, "projects");
  if (!projects.ok()) return projects.error();
  if (*projects == nullptr || (*plain)[(*projects)->value.begin] != '{') return out;
  auto dirs = ObjectMembers(*plain, (*projects)->value.begin);
  if (!dirs.ok()) return dirs.error();
  for (const auto& dir : *dirs) {
    if ((*plain)[dir.value.begin] != '{') continue;
    auto inner = ObjectMembers(*plain, dir.value.begin);
    if (!inner.ok()) return inner.error();
    auto group = OnlyMember(*inner, key);
    if (!group.ok()) return group.error();
    if (*group != nullptr) MCPCELL_TRY(ReadGroup(text, *plain, (*group)->value.begin, key, dir.key + ": ", &out));
  }
  return out;
}

/// The leading whitespace of the line holding `offset`.
std::string IndentAt(const std::string& text, std::size_t offset) {
  std::size_t bol = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  bol = bol == std::string::npos ? 0 : bol + 1;
  std::size_t i = bol;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  return text.substr(bol, i - bol);
}

/// `v` as JSON indented to sit at `indent` (2 spaces a level, as the clients write).
std::string Render(const ordered_json& v, const std::string& indent) {
  std::string s = v.dump(2);
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '\n') out += indent;
  }
  return out;
}

/// `entry` for a diff on the terminal: the values of its env block (API
/// keys) replaced, so --dry-run output can be pasted or logged.
ordered_json Masked(ordered_json entry) {
  if (entry.is_object() && entry.contains("env") && entry["env"].is_object()) {
    for (auto& [k, v] : entry["env"].items()) v = "<value not shown>";
  }
  return entry;
}

/// The edit keeps every server: same names, same order, each unchanged one byte-identical.
Status CheckNothingLost(const std::string& before, const std::string& after, const std::string& key, bool projects) {
  auto a = LocateServers(before, key, projects);
  auto b = LocateServers(after, key, projects);
  if (!a.ok() || !b.ok()) return MakeError("check the edited config", "", "it no longer parses: nothing written");
  if (a->size() != b->size()) return MakeError("check the edited config", "", "a server went missing: nothing written");
  for (std::size_t i = 0; i < a->size(); ++i) {
    if ((*a)[i].name != (*b)[i].name) return MakeError("check the edited config", (*a)[i].name, "renamed or moved: nothing written");
  }
  return {};
}

}  // namespace

Result<std::vector<EntryChange>> ListServers(const std::string& text, const std::string& key, bool project_scopes) {
  auto located = LocateServers(text, key, project_scopes);
  if (!located.ok()) return located.error();
  std::vector<EntryChange> out;
  for (const auto& l : *located) {
    WrapOutcome w = WrapEntry(l.value, WrapOptions{"mcpcell", std::nullopt});
    out.push_back({l.name, w.kind, ListedKind(w, l.value), LineOf(text, l.span.begin), {}, {}, false});
  }
  return out;
}

Result<ConfigEdit> WrapConfig(const std::string& text, const std::string& key, const WrapOptions& opts,
                              std::map<std::string, std::string> originals, bool project_scopes) {
  auto located = LocateServers(text, key, project_scopes);
  if (!located.ok()) return located.error();
  ConfigEdit edit;
  std::vector<std::pair<Span, std::string>> splices;
  for (const auto& l : *located) {
    WrapOutcome w = WrapEntry(l.value, opts);
    EntryChange c{l.name, w.kind, w.note, LineOf(text, l.span.begin), {}, {}, false};
    if (w.kind == WrapOutcome::Kind::kWrapped) {
      std::string indent = IndentAt(text, l.span.begin);
      // An entry wrapped before (now given another --policy) keeps the
      // original of its first wrap: that is what unwrap must put back.
      originals.emplace(l.name, text.substr(l.span.begin, l.span.end - l.span.begin));
      splices.emplace_back(l.span, Render(w.entry, indent));
      c.before = Render(Masked(l.value), indent);
      c.after = Render(Masked(w.entry), indent);
      c.changed = true;
    }
    edit.entries.push_back(std::move(c));
  }
  edit.text = Splice(text, splices);
  edit.originals = std::move(originals);
  if (auto ok = CheckNothingLost(text, edit.text, key, project_scopes); !ok) return ok.error();
  return edit;
}

Result<ConfigEdit> UnwrapConfig(const std::string& text, const std::string& key,
                                std::map<std::string, std::string> originals, bool project_scopes) {
  auto located = LocateServers(text, key, project_scopes);
  if (!located.ok()) return located.error();
  ConfigEdit edit;
  std::vector<std::pair<Span, std::string>> splices;
  for (const auto& l : *located) {
    EntryChange c{l.name, WrapOutcome::Kind::kLeft, "", LineOf(text, l.span.begin), {}, {}, false};
    auto orig = originals.find(l.name);
    if (!IsWrapped(l.value)) {
      c.note = "not wrapped";
    } else if (orig == originals.end()) {
      c.note = "wrapped, but no original was saved for it (wrapped by hand?): left as it is";
    } else {
      splices.emplace_back(l.span, orig->second);
      auto plain = BlankJsoncExtras(orig->second);
      ordered_json was = plain.ok() ? ordered_json::parse(*plain, nullptr, false) : ordered_json();
      c.before = Render(Masked(l.value), IndentAt(text, l.span.begin));
      c.after = Render(Masked(was), IndentAt(text, l.span.begin));
      c.changed = true;
      c.note = "restored";
      originals.erase(orig);
    }
    edit.entries.push_back(std::move(c));
  }
  edit.text = Splice(text, splices);
  edit.originals = std::move(originals);
  if (auto ok = CheckNothingLost(text, edit.text, key, project_scopes); !ok) return ok.error();
  return edit;
}

}  // namespace mcpcell
