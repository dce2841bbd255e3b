#include "client/toml_edit.h"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "client/command_args_edit.h"
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

/// Where a missing `args` goes after the command value: on a line of its
/// own in a [table], after ", " in an inline table; nullopt when `command`
/// is a dotted key (a new line there would land in another table).
std::optional<std::string> ArgsPrefix(const std::string& text, bool inline_table, Span command) {
  if (inline_table) return ", args = ";
  std::size_t bol = text.rfind('\n', command.begin);
  std::string head = text.substr(bol == std::string::npos ? 0 : bol + 1,
                                 command.begin - (bol == std::string::npos ? 0 : bol + 1));
  head.erase(std::remove_if(head.begin(), head.end(), [](char c) { return c == ' ' || c == '\t'; }), head.end());
  if (head != "command=") return std::nullopt;
  return "\nargs = ";
}

CommandArgsServer ServerOf(const std::string& text, const std::string& name, const toml::table& t) {
  CommandArgsServer s{name, EntryOf(t), std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                      "no args key and command is a dotted key: add args = [] to it by hand"};
  if (const toml::node* c = t.get("command")) {
    s.command = SpanOf(text, *c);
    s.args_prefix = ArgsPrefix(text, t.is_inline(), *s.command);
  }
  if (const toml::node* a = t.get("args")) s.args = SpanOf(text, *a);
  return s;
}

Result<toml::table> Parse(const std::string& text) {
  try {
    return toml::parse(text);
  } catch (const toml::parse_error& e) {
    return MakeError("read TOML", "", std::string(e.description()) + " at line " + std::to_string(e.source().begin.line));
  }
}

Result<std::vector<CommandArgsServer>> Locate(const std::string& text, const std::string& key) {
  auto root = Parse(text);
  if (!root.ok()) return root.error();
  std::vector<std::pair<std::size_t, CommandArgsServer>> found;  // where each table starts, for file order
  const toml::table* servers = (*root)[key].as_table();
  if (servers == nullptr) {
    if (root->contains(key)) return MakeError("read \"" + key + "\"", "", "is not a table");
    return std::vector<CommandArgsServer>{};
  }
  for (const auto& [k, v] : *servers) {
    const toml::table* t = v.as_table();
    if (t == nullptr) return MakeError("read server", std::string(k.str()), "is not a table");
    found.emplace_back(OffsetOf(text, t->source().begin), ServerOf(text, std::string(k.str()), *t));
  }
  // In file order (toml++ keeps a table's keys sorted).
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CommandArgsServer> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

/// Whether `between` (command value to args value) is what ArgsPrefix inserted.
bool AddedArgs(const std::string& between) { return between == "\nargs = " || between == ", args = "; }

const CommandArgsSyntax& Toml() {
  static const CommandArgsSyntax kSyntax{"command", " = ", "a server", TomlString, AddedArgs, Locate};
  return kSyntax;
}

}  // namespace

Result<std::vector<EntryChange>> ListTomlServers(const std::string& text, const std::string& key) {
  return ListCommandArgsServers(Toml(), text, key);
}

Result<ConfigEdit> WrapTomlConfig(const std::string& text, const std::string& key, const WrapOptions& opts,
                                  std::map<std::string, std::string> originals) {
  return WrapCommandArgs(Toml(), text, key, opts, std::move(originals));
}

Result<ConfigEdit> UnwrapTomlConfig(const std::string& text, const std::string& key,
                                    std::map<std::string, std::string> originals) {
  return UnwrapCommandArgs(Toml(), text, key, std::move(originals));
}

}  // namespace mcpcell
