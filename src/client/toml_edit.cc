#include "client/toml_edit.h"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "client/jsonc.h"

namespace mcpcell {
namespace {

using nlohmann::ordered_json;

/// The byte offset of a toml++ position: 1-based line, and a 1-based column
/// counted in code points (toml++ decodes UTF-8 before it counts).
std::size_t OffsetOf(const std::string& text, const toml::source_position& pos) {
  std::size_t i = 0;
  for (toml::source_index line = 1; line < pos.line && i < text.size(); ++i) line += text[i] == '\n' ? 1 : 0;
  for (toml::source_index col = 1; col < pos.column && i < text.size(); ++col) {
    ++i;
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;  // continuation bytes
  }
  return i;
}

Span SpanOf(const std::string& text, const toml::node& n) {
  return {OffsetOf(text, n.source().begin), OffsetOf(text, n.source().end)};
}

/// A TOML basic string: JSON's escapes are TOML's, except that DEL must be escaped too (toml.io v1.0.0, "String").
std::string TomlString(const std::string& s) {
  std::string j = ordered_json(s).dump();
  std::string out;
  for (char c : j) out += c == '\x7f' ? std::string("\\u007F") : std::string(1, c);
  return out;
}

std::string TomlArray(const std::vector<std::string>& v) {
  std::string out = "[";
  for (const auto& s : v) out += (out.size() > 1 ? ", " : "") + TomlString(s);
  return out + "]";
}

struct TomlServer {
  std::size_t at = 0;  ///< where the server's table starts (for file order)
  std::string name;
  ordered_json entry;  ///< command, args, env (names), url: what WrapEntry reads
  bool inline_table = false;
  std::optional<Span> command;
  std::optional<Span> args;
};

/// The entry WrapEntry sees: strings as they are; anything else marked so it is left with a reason.
ordered_json EntryOf(const toml::table& t) {
  ordered_json e = ordered_json::object();
  if (auto c = t["command"].value<std::string>()) e["command"] = *c;
  else if (t.contains("command")) e["command"] = ordered_json::object();
  if (const toml::array* a = t["args"].as_array()) {
    e["args"] = ordered_json::array();
    for (const auto& v : *a) {
      if (auto s = v.value<std::string>()) e["args"].push_back(*s);
      else e["args"].push_back(nullptr);
    }
  } else if (t.contains("args")) {
    e["args"] = 0;
  }
  if (const toml::table* env = t["env"].as_table()) {
    for (const auto& [k, v] : *env) e["env"][std::string(k.str())] = "";
  }
  if (t.contains("url")) e["url"] = t["url"].value_or(std::string());
  return e;
}

Result<std::vector<TomlServer>> Locate(const std::string& text, const toml::table& root, const std::string& key) {
  std::vector<TomlServer> out;
  const toml::table* servers = root[key].as_table();
  if (servers == nullptr) {
    if (root.contains(key)) return MakeError("read \"" + key + "\"", "", "is not a table");
    return out;
  }
  for (const auto& [k, v] : *servers) {
    const toml::table* t = v.as_table();
    if (t == nullptr) return MakeError("read server", std::string(k.str()), "is not a table");
    TomlServer s{OffsetOf(text, t->source().begin), std::string(k.str()), EntryOf(*t), t->is_inline(), std::nullopt,
                 std::nullopt};
    if (const toml::node* c = t->get("command")) s.command = SpanOf(text, *c);
    if (const toml::node* a = t->get("args")) s.args = SpanOf(text, *a);
    out.push_back(std::move(s));
  }
  // In file order (toml++ keeps a table's keys sorted).
  std::sort(out.begin(), out.end(), [](const TomlServer& a, const TomlServer& b) { return a.at < b.at; });
  return out;
}

Result<toml::table> Parse(const std::string& text) {
  try {
    return toml::parse(text);
  } catch (const toml::parse_error& e) {
    return MakeError("read TOML", "", std::string(e.description()) + " at line " + std::to_string(e.source().begin.line));
  }
}

std::string Splice(std::string text, std::vector<std::pair<Span, std::string>> edits) {
  std::sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) { return a.first.begin > b.first.begin; });
  for (const auto& [span, repl] : edits) text.replace(span.begin, span.end - span.begin, repl);
  return text;
}

std::string Cut(const std::string& text, std::optional<Span> s) {
  return s ? text.substr(s->begin, s->end - s->begin) : std::string();
}

/// Where a missing `args` goes: after the command value, on a line of its
/// own in a [table], after ", " in an inline table; nullopt when `command`
/// is a dotted key (a new line there would land in another table).
std::optional<std::string> ArgsInsertion(const std::string& text, const TomlServer& s, const std::string& array) {
  if (s.inline_table) return ", args = " + array;
  std::size_t bol = text.rfind('\n', s.command->begin);
  std::string head = text.substr(bol == std::string::npos ? 0 : bol + 1,
                                 s.command->begin - (bol == std::string::npos ? 0 : bol + 1));
  head.erase(std::remove_if(head.begin(), head.end(), [](char c) { return c == ' ' || c == '\t'; }), head.end());
  if (head != "command=") return std::nullopt;
  return "\nargs = " + array;
}

/// Whether `args` is the key mcpcell inserted right after the command value.
bool AddedArgs(const std::string& text, Span command, Span args) {
  if (args.begin < command.end) return false;
  std::string between = text.substr(command.end, args.begin - command.end);
  return between == "\nargs = " || between == ", args = ";
}

}  // namespace

Result<std::vector<EntryChange>> ListTomlServers(const std::string& text, const std::string& key) {
  auto root = Parse(text);
  if (!root.ok()) return root.error();
  auto servers = Locate(text, *root, key);
  if (!servers.ok()) return servers.error();
  std::vector<EntryChange> out;
  for (const auto& s : *servers) {
    WrapOutcome w = WrapEntry(s.entry, WrapOptions{"mcpcell", std::nullopt});
    std::string kind = w.kind == WrapOutcome::Kind::kRemote ? "remote"
                       : w.kind == WrapOutcome::Kind::kAlready ? "wrapped"
                       : s.entry.contains("command") && s.entry["command"].is_string()
                           ? "stdio: " + s.entry["command"].get<std::string>() : "other";
    out.push_back({s.name, w.kind, kind, s.command ? LineOf(text, s.command->begin) : 0, {}, {}, false});
  }
  return out;
}

Result<ConfigEdit> WrapTomlConfig(const std::string& text, const std::string& key, const WrapOptions& opts,
                                  std::map<std::string, std::string> originals) {
  auto root = Parse(text);
  if (!root.ok()) return root.error();
  auto servers = Locate(text, *root, key);
  if (!servers.ok()) return servers.error();
  ConfigEdit edit;
  std::vector<std::pair<Span, std::string>> splices;
  for (const auto& s : *servers) {
    WrapOutcome w = WrapEntry(s.entry, opts);
    EntryChange c{s.name, w.kind, w.note, s.command ? LineOf(text, s.command->begin) : 0, {}, {}, false};
    if (w.kind == WrapOutcome::Kind::kWrapped) {
      std::string cmd = TomlString(w.entry["command"].get<std::string>());
      std::string args = TomlArray(w.entry["args"].get<std::vector<std::string>>());
      std::optional<std::string> insert = s.args ? std::optional<std::string>(args) : ArgsInsertion(text, s, args);
      if (!insert) {
        c.kind = WrapOutcome::Kind::kLeft;
        c.note = "no args key and command is a dotted key: add args = [] to it by hand";
      } else {
        splices.emplace_back(*s.command, cmd);
        splices.emplace_back(s.args ? *s.args : Span{s.command->end, s.command->end}, *insert);
        c.before = "command = " + Cut(text, s.command) + (s.args ? "\nargs = " + Cut(text, s.args) : "");
        c.after = "command = " + cmd + "\nargs = " + args;
        c.changed = true;
        ordered_json orig{{"command", Cut(text, s.command)}, {"args", s.args ? ordered_json(Cut(text, s.args)) : ordered_json()}};
        originals[s.name] = orig.dump();
      }
    }
    edit.entries.push_back(std::move(c));
  }
  edit.text = Splice(text, splices);
  edit.originals = std::move(originals);
  auto check = Parse(edit.text);
  if (!check.ok() || !Locate(edit.text, *check, key).ok() || Locate(edit.text, *check, key)->size() != servers->size()) {
    return MakeError("check the edited config", "", "it no longer parses or lost a server: nothing written");
  }
  return edit;
}

Result<ConfigEdit> UnwrapTomlConfig(const std::string& text, const std::string& key,
                                    std::map<std::string, std::string> originals) {
  auto root = Parse(text);
  if (!root.ok()) return root.error();
  auto servers = Locate(text, *root, key);
  if (!servers.ok()) return servers.error();
  ConfigEdit edit;
  std::vector<std::pair<Span, std::string>> splices;
  for (const auto& s : *servers) {
    EntryChange c{s.name, WrapOutcome::Kind::kLeft, "", s.command ? LineOf(text, s.command->begin) : 0, {}, {}, false};
    auto it = originals.find(s.name);
    ordered_json orig = it == originals.end() ? ordered_json() : ordered_json::parse(it->second, nullptr, false);
    if (!IsWrapped(s.entry)) {
      c.note = "not wrapped";
    } else if (!orig.is_object() || !orig["command"].is_string() || !s.args) {
      c.note = "wrapped, but no original was saved for it (wrapped by hand?): left as it is";
    } else if (!orig["args"].is_string() && !AddedArgs(text, *s.command, *s.args)) {
      c.note = "its args were not where mcpcell put them (edited since?): left as it is";
    } else {
      splices.emplace_back(*s.command, orig["command"].get<std::string>());
      if (orig["args"].is_string()) {
        splices.emplace_back(*s.args, orig["args"].get<std::string>());
      } else {
        splices.emplace_back(Span{s.command->end, s.args->end}, "");  // the args mcpcell added
      }
      c.before = "command = " + Cut(text, s.command) + "\nargs = " + Cut(text, s.args);
      c.after = "command = " + orig["command"].get<std::string>() +
                (orig["args"].is_string() ? "\nargs = " + orig["args"].get<std::string>() : "");
      c.changed = true;
      c.note = "restored";
      originals.erase(it);
    }
    edit.entries.push_back(std::move(c));
  }
  edit.text = Splice(text, splices);
  edit.originals = std::move(originals);
  if (!Parse(edit.text).ok()) return MakeError("check the edited config", "", "it no longer parses: nothing written");
  return edit;
}

}  // namespace mcpcell
