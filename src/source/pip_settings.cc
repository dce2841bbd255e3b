#include "source/pip_settings.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>

#include "source/url_credential.h"
#include "util/terminal_text.h"

namespace mcpcell {
namespace {

// Where packages come from and how to reach it: the settings the caller's
// PIP_* variables may also give (WhyPipSettingsAreNotPublic refuses an allow
// run on any of them, and on any pip.conf).
// (pip's option aliases too: --pypi-url, --default-timeout.)
constexpr std::array<std::string_view, 12> kIndexKeys = {
    "index-url", "pypi-url", "extra-index-url", "no-index", "find-links",      "trusted-host",
    "cert",      "client-cert", "proxy",       "timeout",  "default-timeout", "retries"};

// Keys the install sets on its own command line anyway: not worth a word.
constexpr std::array<std::string_view, 4> kSetByMcpcell = {"disable-pip-version-check", "no-cache-dir", "no-input",
                                                           "progress-bar"};

template <size_t N>
bool In(const std::array<std::string_view, N>& set, std::string_view v) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

/// A Python str repr ('...' or "...") back to its text; false on an escape
/// this reader does not know (\x, \u: a value pip's own files would not hold
/// for an index setting).
bool FromRepr(std::string_view repr, std::string* out) {
  if (repr.size() < 2 || (repr.front() != '\'' && repr.front() != '"') || repr.back() != repr.front()) return false;
  repr = repr.substr(1, repr.size() - 2);
  out->clear();
  for (size_t i = 0; i < repr.size(); ++i) {
    if (repr[i] != '\\') {
      out->push_back(repr[i]);
      continue;
    }
    if (++i == repr.size()) return false;
    switch (repr[i]) {
      case '\\': case '\'': case '"': out->push_back(repr[i]); break;
      case 'n': case 'r': case 't': out->push_back(' '); break;  // pip's multi-value separator in a variable
      default: return false;
    }
  }
  return true;
}

std::string VariableName(std::string_view key) {
  std::string name = "PIP_";
  for (char c : key) name.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return name;
}

}  // namespace

PipSettings ParsePipConfigList(std::string_view text) {
  PipSettings out;
  while (!text.empty()) {
    std::string_view line = text.substr(0, text.find('\n'));
    text.remove_prefix(std::min(text.size(), line.size() + 1));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t eq = line.find('='), dot = line.find('.');
    if (line.empty() || line[0] == ':' || eq == std::string_view::npos || dot == std::string_view::npos || dot > eq) {
      continue;  // ":env:." keys, and lines that are no key (a warning pip printed)
    }
    std::string section(line.substr(0, dot)), name(line.substr(dot + 1, eq - dot - 1));
    std::string value;
    if (In(kIndexKeys, name) && FromRepr(line.substr(eq + 1), &value)) {
      out.kept.push_back({section, name, value});
    } else if (!In(kSetByMcpcell, name)) {
      out.unused.push_back(section + "." + name);
    }
  }
  return out;
}

std::vector<std::string> PipSettings::Env(std::string_view command) const {
  std::map<std::string, std::string> by_name;
  for (std::string_view section : {std::string_view("global"), command}) {
    for (const auto& k : kept) {
      if (k.section == section) by_name[k.name] = k.value;
    }
  }
  std::vector<std::string> env;
  for (const auto& [name, value] : by_name) env.push_back(VariableName(name) + "=" + value);
  return env;
}

bool IsPipIndexKey(std::string_view key) { return In(kIndexKeys, key); }

std::vector<std::string> NonIndexPipVariables(const std::vector<std::string>& env) {
  std::vector<std::string> names;
  for (std::string_view entry : env) {
    std::string_view name = entry.substr(0, entry.find('='));
    if (name.substr(0, 4) != "PIP_") continue;
    std::string key;
    for (char c : name.substr(4)) key.push_back(c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    if (!IsPipIndexKey(key) && !In(kSetByMcpcell, key)) names.emplace_back(name);
  }
  return names;
}

std::vector<std::string> PipIndexTokenPieces(const std::vector<std::string>& env) {
  std::vector<std::string> pieces;
  for (std::string_view entry : env) {
    std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq);
    if (name != "PIP_INDEX_URL" && name != "PIP_EXTRA_INDEX_URL" && name != "PIP_FIND_LINKS" && name != "PIP_PROXY") {
      continue;
    }
    std::string_view urls = entry.substr(eq + 1);
    while (!urls.empty()) {
      std::size_t end = urls.find_first_of(" \t\n");
      std::string_view url = urls.substr(0, end);
      if (!url.empty()) AppendUrlTokenPieces(url, &pieces);
      if (end == std::string_view::npos) break;
      urls.remove_prefix(end + 1);
    }
  }
  return pieces;
}

std::string UnusedPipSettingsNote(const PipSettings& settings) {
  if (settings.unused.empty()) return "";
  std::string names;
  for (const auto& n : settings.unused) names += (names.empty() ? "" : ", ") + VisibleOnTerminal(n);
  return "pip.conf's " + names +
         " not used by mcpcell's installs: the host pip reads only the index settings of pip.conf (index-url, "
         "extra-index-url, find-links, trusted-host, cert, client-cert, proxy, timeout, retries) — what is built and "
         "where it is written are mcpcell's to decide";
}

}  // namespace mcpcell
