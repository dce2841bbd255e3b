#include "client/yaml_edit.h"

#include <yaml.h>

#include <algorithm>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "client/jsonc.h"

namespace mcpcell {
namespace {

using nlohmann::ordered_json;

/// One YAML node with its byte range: what the edit needs of libyaml's events.
struct YNode {
  enum class Kind { kScalar, kSequence, kMapping } kind = Kind::kScalar;
  bool flow = false;
  bool anchored = false;  ///< has an anchor, or is an alias: not rewritten
  std::string value;      ///< scalars
  Span span;
  std::vector<YNode> items;                        ///< sequences
  std::vector<std::pair<YNode, YNode>> members;    ///< mappings
};

class YamlParser {
 public:
  explicit YamlParser(const std::string& text) {
    yaml_parser_initialize(&p_);
    yaml_parser_set_input_string(&p_, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    yaml_parser_set_encoding(&p_, YAML_UTF8_ENCODING);
  }
  ~YamlParser() { yaml_parser_delete(&p_); }
  YamlParser(const YamlParser&) = delete;
  YamlParser& operator=(const YamlParser&) = delete;

  /// The first document's root node (an empty mapping for an empty file).
  Result<YNode> Root() {
    for (;;) {
      yaml_event_t e;
      if (!yaml_parser_parse(&p_, &e)) return Failure();
      auto type = e.type;
      yaml_event_delete(&e);
      if (type == YAML_DOCUMENT_START_EVENT) {
        if (!yaml_parser_parse(&p_, &e)) return Failure();
        return NodeFrom(&e, 0);
      }
      if (type == YAML_STREAM_END_EVENT) return YNode{YNode::Kind::kMapping, false, false, {}, {}, {}, {}};
    }
  }

 private:
  Error Failure() {
    return MakeError("read YAML", "", std::string(p_.problem != nullptr ? p_.problem : "parse error") + " at line " +
                                          std::to_string(p_.problem_mark.line + 1));
  }

  /// The node that starts with `e` (taken over and freed here), children included.
  Result<YNode> NodeFrom(yaml_event_t* e, int depth) {
    YNode n;
    n.span = {e->start_mark.index, e->end_mark.index};
    yaml_event_type_t type = e->type;
    n.anchored = type == YAML_ALIAS_EVENT;
    if (type == YAML_SCALAR_EVENT) {
      n.value.assign(reinterpret_cast<const char*>(e->data.scalar.value), e->data.scalar.length);
      n.anchored = e->data.scalar.anchor != nullptr;
    } else if (type == YAML_SEQUENCE_START_EVENT) {
      n.kind = YNode::Kind::kSequence;
      n.flow = e->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
      n.anchored = e->data.sequence_start.anchor != nullptr;
    } else if (type == YAML_MAPPING_START_EVENT) {
      n.kind = YNode::Kind::kMapping;
      n.flow = e->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
      n.anchored = e->data.mapping_start.anchor != nullptr;
    }
    yaml_event_delete(e);
    if (type != YAML_SEQUENCE_START_EVENT && type != YAML_MAPPING_START_EVENT) return n;
    if (depth > 256) return MakeError("read YAML", "", "nested deeper than 256 levels");
    std::optional<YNode> key;
    for (;;) {
      yaml_event_t c;
      if (!yaml_parser_parse(&p_, &c)) return Failure();
      if (c.type == YAML_SEQUENCE_END_EVENT || c.type == YAML_MAPPING_END_EVENT) {
        // A block collection's end event sits at the next token, past blank
        // lines and comments that are not its own: it ends with its last child.
        n.span.end = c.end_mark.index;
        if (!n.flow && !n.items.empty()) n.span.end = n.items.back().span.end;
        if (!n.flow && !n.members.empty()) n.span.end = n.members.back().second.span.end;
        yaml_event_delete(&c);
        return n;
      }
      auto child = NodeFrom(&c, depth + 1);
      if (!child.ok()) return child.error();
      if (n.kind == YNode::Kind::kSequence) {
        n.items.push_back(std::move(*child));
      } else if (!key) {
        key = std::move(*child);
      } else {
        n.members.emplace_back(std::move(*key), std::move(*child));
        key.reset();
      }
    }
  }

  yaml_parser_t p_{};
};


/// libyaml counts marks in characters; the edit needs bytes.
std::vector<std::size_t> CharOffsets(const std::string& text) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) out.push_back(i);
  }
  out.push_back(text.size());
  return out;
}

void ToBytes(YNode* n, const std::vector<std::size_t>& at) {
  n->span = {at[std::min(n->span.begin, at.size() - 1)], at[std::min(n->span.end, at.size() - 1)]};
  for (auto& i : n->items) ToBytes(&i, at);
  for (auto& [k, v] : n->members) {
    ToBytes(&k, at);
    ToBytes(&v, at);
  }
}

/// A YAML double-quoted scalar: JSON's escapes are YAML's; DEL and the C1
/// controls are not printable in YAML (YAML 1.2 section 5.1) and are escaped.
std::string YamlString(const std::string& s) {
  std::string j = ordered_json(s).dump();
  std::string out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(j[i]);
    unsigned char d = i + 1 < j.size() ? static_cast<unsigned char>(j[i + 1]) : 0;
    if (c == 0x7F) {
      out += "\\u007F";
    } else if (c == 0xC2 && d >= 0x80 && d <= 0x9F) {
      static const char* kHex = "0123456789ABCDEF";
      out += std::string("\\u00") + kHex[d >> 4] + kHex[d & 15];
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string YamlArray(const std::vector<std::string>& v) {
  std::string out = "[";
  for (const auto& s : v) out += (out.size() > 1 ? ", " : "") + YamlString(s);
  return out + "]";
}

const YNode* Member(const YNode& map, const std::string& key) {
  for (const auto& [k, v] : map.members) {
    if (k.kind == YNode::Kind::kScalar && k.value == key) return &v;
  }
  return nullptr;
}

struct YServer {
  std::string name;
  ordered_json entry;
  std::string left;  ///< why it is not rewritten, when it is not
  bool remote = false;
  bool flow = false;
  std::optional<Span> cmd_key, cmd, args;
};

/// What WrapEntry reads, from a Goose extension: cmd, args, and the names
/// of envs and env_keys (Goose's docs: "envs", "env_keys").
YServer ServerOf(const std::string& name, const YNode& ext) {
  YServer s{name, ordered_json::object(), "", false, ext.flow, std::nullopt, std::nullopt, std::nullopt};
  const YNode* type = Member(ext, "type");
  std::string t = type != nullptr ? type->value : "";
  if (t == "sse" || t == "streamable_http") s.remote = true;
  else if (!t.empty() && t != "stdio") s.left = "a Goose '" + t + "' extension: no command to wrap";
  for (const auto& [k, v] : ext.members) {
    if (k.value == "cmd") {
      s.cmd_key = k.span;
      s.cmd = v.span;
      if (v.kind != YNode::Kind::kScalar || v.span.begin >= v.span.end) s.left = "cmd is not a plain string";
    }
    bool item_anchored = std::any_of(v.items.begin(), v.items.end(), [](const YNode& i) { return i.anchored; });
    // An anchor here may be aliased elsewhere (rewriting it would change or
    // break that), an alias is another node's text: neither is rewritten.
    if (ext.anchored || v.anchored || k.anchored || item_anchored) {
      s.left = "uses YAML anchors or aliases, which mcpcell does not rewrite";
    }
  }
  if (const YNode* cmd = Member(ext, "cmd"); cmd != nullptr && cmd->kind == YNode::Kind::kScalar) {
    s.entry["command"] = cmd->value;
  }
  if (const YNode* args = Member(ext, "args"); args != nullptr) {
    s.args = args->span;
    s.entry["args"] = ordered_json::array();
    for (const auto& i : args->items) s.entry["args"].push_back(i.kind == YNode::Kind::kScalar ? ordered_json(i.value) : ordered_json());
    if (args->kind != YNode::Kind::kSequence) s.entry["args"] = 0;
  }
  if (const YNode* envs = Member(ext, "envs"); envs != nullptr) {
    for (const auto& [k, v] : envs->members) s.entry["env"][k.value] = "";
  }
  if (const YNode* keys = Member(ext, "env_keys"); keys != nullptr) {
    for (const auto& i : keys->items) s.entry["env"][i.value] = "";
  }
  return s;
}

Result<std::vector<YServer>> Locate(const std::string& text, const std::string& key) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) return MakeError("read YAML", "", "starts with a byte order mark: remove it");
  YamlParser parser(text);
  auto root = parser.Root();
  if (!root.ok()) return root.error();
  ToBytes(&*root, CharOffsets(text));
  std::vector<YServer> out;
  if (root->kind != YNode::Kind::kMapping) return MakeError("read YAML", "", "the document is not a mapping");
  int seen = 0;
  for (const auto& [k, v] : root->members) seen += k.value == key ? 1 : 0;
  if (seen > 1) return MakeError("read \"" + key + "\"", "", "the key appears twice at the top level: keep one");
  const YNode* exts = Member(*root, key);
  if (exts == nullptr) return out;
  if (exts->kind != YNode::Kind::kMapping) return MakeError("read \"" + key + "\"", "", "is not a mapping");
  for (const auto& [k, v] : exts->members) {
    for (const auto& s : out) {
      if (s.name == k.value) return MakeError("read \"" + key + "\"", "", "extension \"" + k.value + "\" appears twice: keep one");
    }
    if (v.anchored && v.kind != YNode::Kind::kMapping) {  // an alias: another extension's text
      out.push_back(YServer{k.value, ordered_json::object(), "uses YAML anchors or aliases, which mcpcell does not rewrite",
                            false, false, std::nullopt, std::nullopt, std::nullopt});
      continue;
    }
    if (v.kind != YNode::Kind::kMapping) return MakeError("read extension", k.value, "is not a mapping");
    out.push_back(ServerOf(k.value, v));
  }
  return out;
}

/// Routes an extension through WrapEntry, or says why not.
WrapOutcome Outcome(const YServer& s, const WrapOptions& opts) {
  if (s.remote) return {WrapOutcome::Kind::kRemote, {}, "a remote (URL) extension: nothing runs on this machine"};
  if (!s.left.empty()) return {WrapOutcome::Kind::kLeft, {}, s.left};
  return WrapEntry(s.entry, opts);
}

std::string Splice(std::string text, std::vector<std::pair<Span, std::string>> edits) {
  std::sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) { return a.first.begin > b.first.begin; });
  for (const auto& [span, repl] : edits) text.replace(span.begin, span.end - span.begin, repl);
  return text;
}

std::string Cut(const std::string& text, std::optional<Span> s) {
  return s ? text.substr(s->begin, s->end - s->begin) : std::string();
}

/// What goes after the cmd value when there is no args: a key of its own
/// at cmd's indentation, or ", args: [...]" in a flow mapping.
std::string ArgsInsertion(const std::string& text, const YServer& s, const std::string& array) {
  if (s.flow) return ", args: " + array;
  std::size_t bol = text.rfind('\n', s.cmd_key->begin);
  bol = bol == std::string::npos ? 0 : bol + 1;
  return "\n" + std::string(s.cmd_key->begin - bol, ' ') + "args: " + array;
}

bool AddedArgs(const std::string& text, const YServer& s) {
  if (!s.args || s.args->begin < s.cmd->end) return false;
  std::string between = text.substr(s.cmd->end, s.args->begin - s.cmd->end);
  return between == ", args: " || (between.size() > 7 && between[0] == '\n' &&
                                   between.substr(between.size() - 6) == "args: " &&
                                   between.find_first_not_of(' ', 1) == between.size() - 6);
}

}  // namespace

Result<std::vector<EntryChange>> ListYamlServers(const std::string& text, const std::string& key) {
  auto servers = Locate(text, key);
  if (!servers.ok()) return servers.error();
  std::vector<EntryChange> out;
  for (const auto& s : *servers) {
    WrapOutcome w = Outcome(s, WrapOptions{"mcpcell", std::nullopt});
    std::string kind = w.kind == WrapOutcome::Kind::kRemote ? "remote"
                       : w.kind == WrapOutcome::Kind::kAlready ? "wrapped"
                       : s.entry.contains("command") && s.entry["command"].is_string()
                           ? "stdio: " + s.entry["command"].get<std::string>() : "other";
    out.push_back({s.name, w.kind, kind, s.cmd ? LineOf(text, s.cmd->begin) : 0, {}, {}, false});
  }
  return out;
}

Result<ConfigEdit> WrapYamlConfig(const std::string& text, const std::string& key, const WrapOptions& opts,
                                  std::map<std::string, std::string> originals) {
  auto servers = Locate(text, key);
  if (!servers.ok()) return servers.error();
  ConfigEdit edit;
  std::vector<std::pair<Span, std::string>> splices;
  for (const auto& s : *servers) {
    WrapOutcome w = Outcome(s, opts);
    EntryChange c{s.name, w.kind, w.note, s.cmd ? LineOf(text, s.cmd->begin) : 0, {}, {}, false};
    if (w.kind == WrapOutcome::Kind::kWrapped) {
      std::string cmd = YamlString(w.entry["command"].get<std::string>());
      std::string args = YamlArray(w.entry["args"].get<std::vector<std::string>>());
      splices.emplace_back(*s.cmd, cmd);
      splices.emplace_back(s.args ? *s.args : Span{s.cmd->end, s.cmd->end}, s.args ? args : ArgsInsertion(text, s, args));
      c.before = "cmd: " + Cut(text, s.cmd) + (s.args ? "\nargs: " + Cut(text, s.args) : "");
      c.after = "cmd: " + cmd + "\nargs: " + args;
      c.changed = true;
      originals[s.name] = ordered_json{{"cmd", Cut(text, s.cmd)}, {"args", s.args ? ordered_json(Cut(text, s.args)) : ordered_json()}}.dump();
    }
    edit.entries.push_back(std::move(c));
  }
  edit.text = Splice(text, splices);
  edit.originals = std::move(originals);
  auto check = Locate(edit.text, key);
  if (!check.ok() || check->size() != servers->size()) {
    return MakeError("check the edited config", "", "it no longer parses or lost an extension: nothing written");
  }
  return edit;
}

Result<ConfigEdit> UnwrapYamlConfig(const std::string& text, const std::string& key,
                                    std::map<std::string, std::string> originals) {
  auto servers = Locate(text, key);
  if (!servers.ok()) return servers.error();
  ConfigEdit edit;
  std::vector<std::pair<Span, std::string>> splices;
  for (const auto& s : *servers) {
    EntryChange c{s.name, WrapOutcome::Kind::kLeft, "", s.cmd ? LineOf(text, s.cmd->begin) : 0, {}, {}, false};
    auto it = originals.find(s.name);
    ordered_json orig = it == originals.end() ? ordered_json() : ordered_json::parse(it->second, nullptr, false);
    if (!IsWrapped(s.entry)) {
      c.note = "not wrapped";
    } else if (!orig.is_object() || !orig["cmd"].is_string() || !s.args) {
      c.note = "wrapped, but no original was saved for it (wrapped by hand?): left as it is";
    } else if (!orig["args"].is_string() && !AddedArgs(text, s)) {
      c.note = "its args were not where mcpcell put them (edited since?): left as it is";
    } else {
      splices.emplace_back(*s.cmd, orig["cmd"].get<std::string>());
      if (orig["args"].is_string()) splices.emplace_back(*s.args, orig["args"].get<std::string>());
      else splices.emplace_back(Span{s.cmd->end, s.args->end}, "");  // the args mcpcell added
      c.before = "cmd: " + Cut(text, s.cmd) + "\nargs: " + Cut(text, s.args);
      c.after = "cmd: " + orig["cmd"].get<std::string>() + (orig["args"].is_string() ? "\nargs: " + orig["args"].get<std::string>() : "");
      c.changed = true;
      c.note = "restored";
      originals.erase(it);
    }
    edit.entries.push_back(std::move(c));
  }
  edit.text = Splice(text, splices);
  edit.originals = std::move(originals);
  if (!Locate(edit.text, key).ok()) return MakeError("check the edited config", "", "it no longer parses: nothing written");
  return edit;
}

}  // namespace mcpcell

