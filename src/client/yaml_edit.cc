#include "client/yaml_edit.h"

#include <yaml.h>

#include <algorithm>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "client/command_args_edit.h"
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

const YNode* Member(const YNode& map, const std::string& key) {
  for (const auto& [k, v] : map.members) {
    if (k.kind == YNode::Kind::kScalar && k.value == key) return &v;
  }
  return nullptr;
}

const char kAnchors[] = "uses YAML anchors or aliases, which mcpcell does not rewrite";

WrapOutcome Left(const std::string& why) { return {WrapOutcome::Kind::kLeft, {}, why}; }

/// What goes after the cmd value when there is no args: a key of its own
/// at cmd's indentation, or ", args: " in a flow mapping.
std::string ArgsPrefix(const std::string& text, bool flow, Span cmd_key) {
  if (flow) return ", args: ";
  std::size_t bol = text.rfind('\n', cmd_key.begin);
  bol = bol == std::string::npos ? 0 : bol + 1;
  return "\n" + std::string(cmd_key.begin - bol, ' ') + "args: ";
}

/// What WrapEntry reads, from a Goose extension: cmd, args, and the names
/// of envs and env_keys (Goose's docs: "envs", "env_keys"); a remote
/// extension, one of another type and one with anchors are judged here.
CommandArgsServer ServerOf(const std::string& text, const std::string& name, const YNode& ext) {
  CommandArgsServer s{name, ordered_json::object(), std::nullopt, std::nullopt, std::nullopt, std::nullopt, ""};
  const YNode* type = Member(ext, "type");
  std::string t = type != nullptr ? type->value : "";
  std::string left;
  if (!t.empty() && t != "stdio" && t != "sse" && t != "streamable_http") left = "a Goose '" + t + "' extension: no command to wrap";
  for (const auto& [k, v] : ext.members) {
    if (k.value == "cmd") {
      s.command = v.span;
      s.args_prefix = ArgsPrefix(text, ext.flow, k.span);
      if (v.kind != YNode::Kind::kScalar || v.span.begin >= v.span.end) left = "cmd is not a plain string";
    }
    bool item_anchored = std::any_of(v.items.begin(), v.items.end(), [](const YNode& i) { return i.anchored; });
    // An anchor here may be aliased elsewhere (rewriting it would change or
    // break that), an alias is another node's text: neither is rewritten.
    if (ext.anchored || v.anchored || k.anchored || item_anchored) left = kAnchors;
  }
  if (t == "sse" || t == "streamable_http") {
    s.verdict = WrapOutcome{WrapOutcome::Kind::kRemote, {}, "a remote (URL) extension: nothing runs on this machine"};
  } else if (!left.empty()) {
    s.verdict = Left(left);
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

Result<std::vector<CommandArgsServer>> Locate(const std::string& text, const std::string& key) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) return MakeError("read YAML", "", "starts with a byte order mark: remove it");
  YamlParser parser(text);
  auto root = parser.Root();
  if (!root.ok()) return root.error();
  ToBytes(&*root, CharOffsets(text));
  std::vector<CommandArgsServer> out;
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
      out.push_back(CommandArgsServer{k.value, ordered_json::object(), Left(kAnchors), std::nullopt, std::nullopt,
                                      std::nullopt, ""});
      continue;
    }
    if (v.kind != YNode::Kind::kMapping) return MakeError("read extension", k.value, "is not a mapping");
    out.push_back(ServerOf(text, k.value, v));
  }
  return out;
}

/// Whether `between` (cmd value to args value) is what ArgsPrefix inserted.
bool AddedArgs(const std::string& between) {
  return between == ", args: " || (between.size() > 7 && between[0] == '\n' &&
                                   between.substr(between.size() - 6) == "args: " &&
                                   between.find_first_not_of(' ', 1) == between.size() - 6);
}

const CommandArgsSyntax& Yaml() {
  static const CommandArgsSyntax kSyntax{"cmd", ": ", "an extension", YamlString, AddedArgs, Locate};
  return kSyntax;
}

}  // namespace

Result<std::vector<EntryChange>> ListYamlServers(const std::string& text, const std::string& key) {
  return ListCommandArgsServers(Yaml(), text, key);
}

Result<ConfigEdit> WrapYamlConfig(const std::string& text, const std::string& key, const WrapOptions& opts,
                                  std::map<std::string, std::string> originals) {
  return WrapCommandArgs(Yaml(), text, key, opts, std::move(originals));
}

Result<ConfigEdit> UnwrapYamlConfig(const std::string& text, const std::string& key,
                                    std::map<std::string, std::string> originals) {
  return UnwrapCommandArgs(Yaml(), text, key, std::move(originals));
}

}  // namespace mcpcell
