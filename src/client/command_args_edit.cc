#include "client/command_args_edit.h"

namespace mcpcell {
namespace {

using nlohmann::ordered_json;

std::string Cut(const std::string& text, std::optional<Span> s) {
  return s ? text.substr(s->begin, s->end - s->begin) : std::string();
}

std::string Array(const CommandArgsSyntax& syntax, const std::vector<std::string>& v) {
  std::string out = "[";
  for (const auto& s : v) out += (out.size() > 1 ? ", " : "") + syntax.quote(s);
  return out + "]";
}

/// The format's own verdict, or WrapEntry's. Only the names of the entry's
/// env were read (and only command and args are rewritten): no env value
/// can be moved into args.
WrapOutcome Judge(const CommandArgsServer& s, WrapOptions opts) {
  opts.env_values = false;
  return s.verdict ? *s.verdict : WrapEntry(s.entry, opts);
}

int LineOfCommand(const std::string& text, const CommandArgsServer& s) {
  return s.command ? LineOf(text, s.command->begin) : 0;
}

/// "command = X\nargs = Y" (or the YAML spelling), args only when there is one.
std::string Shown(const CommandArgsSyntax& syntax, const std::string& command, const std::optional<std::string>& args) {
  return syntax.command_key + syntax.assign + command + (args ? "\nargs" + syntax.assign + *args : "");
}

/// One wrapped entry's splices, display and saved original; kLeft with the
/// format's note when it has no args key and none can be added.
void WrapOne(const CommandArgsSyntax& syntax, const std::string& text, const CommandArgsServer& s,
             const WrapOutcome& w, EntryChange* c, std::vector<std::pair<Span, std::string>>* splices,
             std::map<std::string, std::string>* originals) {
  std::string cmd = syntax.quote(w.entry["command"].get<std::string>());
  std::string args = Array(syntax, w.entry["args"].get<std::vector<std::string>>());
  std::optional<std::string> insert = s.args ? std::optional<std::string>(args)
                                      : s.args_prefix ? std::optional<std::string>(*s.args_prefix + args)
                                                      : std::nullopt;
  if (!insert) {
    c->kind = WrapOutcome::Kind::kLeft;
    c->note = s.no_args_note;
    return;
  }
  splices->emplace_back(*s.command, cmd);
  splices->emplace_back(s.args ? *s.args : Span{s.command->end, s.command->end}, *insert);
  c->before = Shown(syntax, Cut(text, s.command), s.args ? std::optional<std::string>(Cut(text, s.args)) : std::nullopt);
  c->after = Shown(syntax, cmd, args);
  c->changed = true;
  // An entry wrapped before keeps the original of its first wrap (config_edit.cc).
  originals->emplace(s.name, ordered_json{{syntax.command_key, Cut(text, s.command)}, {"args", s.args ? ordered_json(Cut(text, s.args)) : ordered_json()}}
                                     .dump());
}

/// Whether `args` is the key wrapping inserted right after the command value.
bool AddedArgs(const CommandArgsSyntax& syntax, const std::string& text, const CommandArgsServer& s) {
  if (!s.command || !s.args || s.args->begin < s.command->end) return false;
  return syntax.added_args(text.substr(s.command->end, s.args->begin - s.command->end));
}

/// One entry put back from its saved original, or left with the reason.
void UnwrapOne(const CommandArgsSyntax& syntax, const std::string& text, const CommandArgsServer& s, EntryChange* c,
               std::vector<std::pair<Span, std::string>>* splices, std::map<std::string, std::string>* originals) {
  auto it = originals->find(s.name);
  ordered_json orig = it == originals->end() ? ordered_json() : ordered_json::parse(it->second, nullptr, false);
  if (!IsWrapped(s.entry)) {
    c->note = "not wrapped";
  } else if (!orig.is_object() || !orig[syntax.command_key].is_string() || !s.args) {
    c->note = "wrapped, but no original was saved for it (wrapped by hand?): left as it is";
  } else if (!orig["args"].is_string() && !AddedArgs(syntax, text, s)) {
    c->note = "its args were not where mcpcell put them (edited since?): left as it is";
  } else {
    std::string command = orig[syntax.command_key].get<std::string>();
    std::optional<std::string> args = orig["args"].is_string() ? std::optional<std::string>(orig["args"].get<std::string>()) : std::nullopt;
    splices->emplace_back(*s.command, command);
    if (args) {
      splices->emplace_back(*s.args, *args);
    } else {
      splices->emplace_back(Span{s.command->end, s.args->end}, "");  // the args mcpcell added
    }
    c->before = Shown(syntax, Cut(text, s.command), Cut(text, s.args));
    c->after = Shown(syntax, command, args);
    c->changed = true;
    c->note = "restored";
    originals->erase(it);
  }
}

}  // namespace

Result<std::vector<EntryChange>> ListCommandArgsServers(const CommandArgsSyntax& syntax, const std::string& text,
                                                        const std::string& key) {
  auto servers = syntax.locate(text, key);
  if (!servers.ok()) return servers.error();
  std::vector<EntryChange> out;
  for (const auto& s : *servers) {
    WrapOutcome w = Judge(s, WrapOptions{"mcpcell", std::nullopt});
    out.push_back({s.name, w.kind, ListedKind(w, s.entry), LineOfCommand(text, s), {}, {}, false});
  }
  return out;
}

Result<ConfigEdit> WrapCommandArgs(const CommandArgsSyntax& syntax, const std::string& text, const std::string& key,
                                   const WrapOptions& opts, std::map<std::string, std::string> originals) {
  auto servers = syntax.locate(text, key);
  if (!servers.ok()) return servers.error();
  ConfigEdit edit;
  std::vector<std::pair<Span, std::string>> splices;
  for (const auto& s : *servers) {
    WrapOutcome w = Judge(s, opts);
    EntryChange c{s.name, w.kind, w.note, LineOfCommand(text, s), {}, {}, false};
    if (w.kind == WrapOutcome::Kind::kWrapped) WrapOne(syntax, text, s, w, &c, &splices, &originals);
    edit.entries.push_back(std::move(c));
  }
  edit.text = Splice(text, splices);
  edit.originals = std::move(originals);
  auto check = syntax.locate(edit.text, key);
  if (!check.ok() || check->size() != servers->size()) {
    return MakeError("check the edited config", "", "it no longer parses or lost " + syntax.lost_entry + ": nothing written");
  }
  return edit;
}

Result<ConfigEdit> UnwrapCommandArgs(const CommandArgsSyntax& syntax, const std::string& text, const std::string& key,
                                     std::map<std::string, std::string> originals) {
  auto servers = syntax.locate(text, key);
  if (!servers.ok()) return servers.error();
  ConfigEdit edit;
  std::vector<std::pair<Span, std::string>> splices;
  for (const auto& s : *servers) {
    EntryChange c{s.name, WrapOutcome::Kind::kLeft, "", LineOfCommand(text, s), {}, {}, false};
    UnwrapOne(syntax, text, s, &c, &splices, &originals);
    edit.entries.push_back(std::move(c));
  }
  edit.text = Splice(text, splices);
  edit.originals = std::move(originals);
  if (!syntax.locate(edit.text, key).ok()) {
    return MakeError("check the edited config", "", "it no longer parses: nothing written");
  }
  return edit;
}

}  // namespace mcpcell
