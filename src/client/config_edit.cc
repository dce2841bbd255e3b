#include "client/config_edit.h"

#include <algorithm>
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

/// The entries under top-level `key`, with their spans in `text`; none when
/// the key is absent. Duplicate names are refused: a client takes one of
/// them, and which one is its own business.
Result<std::vector<Located>> LocateServers(const std::string& text, const std::string& key) {
  auto plain = BlankJsoncExtras(text);
  if (!plain.ok()) return plain.error();
  auto top = TopValue(*plain);
  if (!top.ok()) return top.error();
  auto members = ObjectMembers(*plain, top->begin);
  if (!members.ok()) return members.error();
  std::vector<Located> out;
  auto it = std::find_if(members->begin(), members->end(), [&](const Member& m) { return m.key == key; });
  if (it == members->end()) return out;
  // Two "mcpServers" keys: JSON.parse (most clients) takes the last, other
  // parsers the first — wrapping one could leave the one the client runs.
  if (std::find_if(it + 1, members->end(), [&](const Member& m) { return m.key == key; }) != members->end()) {
    return MakeError("read \"" + key + "\"", "", "the key appears twice at the top level: keep one");
  }
  auto servers = ObjectMembers(*plain, it->value.begin);
  if (!servers.ok()) return MakeError("read \"" + key + "\"", "", servers.error().detail);
  for (const auto& m : *servers) {
    for (const auto& seen : out) {
      if (seen.name == m.key) {
        return MakeError("read \"" + key + "\"", "", "server \"" + m.key + "\" appears twice (lines " +
                         std::to_string(LineOf(text, seen.span.begin)) + " and " +
                         std::to_string(LineOf(text, m.value.begin)) + "): keep one");
      }
    }
    ordered_json v = ordered_json::parse(plain->substr(m.value.begin, m.value.end - m.value.begin), nullptr, false);
    if (v.is_discarded()) return MakeError("read server", m.key, "its entry is not valid JSON");
    out.push_back({m.key, m.value, std::move(v)});
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

/// Applies the replacements (span → text) from the last to the first, so
/// earlier offsets stay valid.
std::string Splice(std::string text, std::vector<std::pair<Span, std::string>> edits) {
  std::sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) { return a.first.begin > b.first.begin; });
  for (const auto& [span, repl] : edits) text.replace(span.begin, span.end - span.begin, repl);
  return text;
}

/// The edit keeps every server: same names, same order, each unchanged one byte-identical.
Status CheckNothingLost(const std::string& before, const std::string& after, const std::string& key) {
  auto a = LocateServers(before, key);
  auto b = LocateServers(after, key);
  if (!a.ok() || !b.ok()) return MakeError("check the edited config", "", "it no longer parses: nothing written");
  if (a->size() != b->size()) return MakeError("check the edited config", "", "a server went missing: nothing written");
  for (std::size_t i = 0; i < a->size(); ++i) {
    if ((*a)[i].name != (*b)[i].name) return MakeError("check the edited config", (*a)[i].name, "renamed or moved: nothing written");
  }
  return {};
}

}  // namespace

Result<std::vector<EntryChange>> ListServers(const std::string& text, const std::string& key) {
  auto located = LocateServers(text, key);
  if (!located.ok()) return located.error();
  std::vector<EntryChange> out;
  for (const auto& l : *located) {
    EntryChange c{l.name, WrapOutcome::Kind::kLeft, "", LineOf(text, l.span.begin), {}, {}, false};
    WrapOutcome w = WrapEntry(l.value, WrapOptions{"mcpcell", std::nullopt});
    c.kind = w.kind;
    if (w.kind == WrapOutcome::Kind::kRemote) {
      c.note = "remote";
    } else if (w.kind == WrapOutcome::Kind::kAlready) {
      c.note = "wrapped";
    } else if (l.value.contains("command") && l.value["command"].is_string()) {
      c.note = "stdio: " + l.value["command"].get<std::string>();
    } else {
      c.note = "other";
    }
    out.push_back(std::move(c));
  }
  return out;
}

Result<ConfigEdit> WrapConfig(const std::string& text, const std::string& key, const WrapOptions& opts,
                              std::map<std::string, std::string> originals) {
  auto located = LocateServers(text, key);
  if (!located.ok()) return located.error();
  ConfigEdit edit;
  std::vector<std::pair<Span, std::string>> splices;
  for (const auto& l : *located) {
    WrapOutcome w = WrapEntry(l.value, opts);
    EntryChange c{l.name, w.kind, w.note, LineOf(text, l.span.begin), {}, {}, false};
    if (w.kind == WrapOutcome::Kind::kWrapped) {
      c.before = text.substr(l.span.begin, l.span.end - l.span.begin);
      c.after = Render(w.entry, IndentAt(text, l.span.begin));
      c.changed = true;
      originals[l.name] = c.before;
      splices.emplace_back(l.span, c.after);
    }
    edit.entries.push_back(std::move(c));
  }
  edit.text = Splice(text, splices);
  edit.originals = std::move(originals);
  if (auto ok = CheckNothingLost(text, edit.text, key); !ok) return ok.error();
  return edit;
}

Result<ConfigEdit> UnwrapConfig(const std::string& text, const std::string& key,
                                std::map<std::string, std::string> originals) {
  auto located = LocateServers(text, key);
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
      c.before = text.substr(l.span.begin, l.span.end - l.span.begin);
      c.after = orig->second;
      c.changed = true;
      c.note = "restored";
      splices.emplace_back(l.span, c.after);
      originals.erase(orig);
    }
    edit.entries.push_back(std::move(c));
  }
  edit.text = Splice(text, splices);
  edit.originals = std::move(originals);
  if (auto ok = CheckNothingLost(text, edit.text, key); !ok) return ok.error();
  return edit;
}

}  // namespace mcpcell
