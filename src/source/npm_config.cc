#include "source/npm_config.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <nlohmann/json.hpp>

#include "source/registry_url.h"
#include "util/terminal_text.h"

namespace mcpcell {
namespace {

/// "@scope:registry" with a scope npm could have written (letters, digits,
/// ". _ ~ -"): the key goes into the npmrc the cells get, so nothing that
/// ini would read as a section, an array or a comment.
bool IsScopeRegistryKey(std::string_view key) {
  constexpr std::string_view kSuffix = ":registry";
  if (key.size() <= kSuffix.size() + 1 || key[0] != '@' || !key.ends_with(kSuffix)) return false;
  std::string_view scope = key.substr(1, key.size() - kSuffix.size() - 1);
  return std::all_of(scope.begin(), scope.end(), [](unsigned char c) {
    // What npm's scope accepts: encodeURIComponent keeps ! ' ( ) * ~ too (adv5).
    return std::isalnum(c) || std::string_view("._~-!'()*").find(static_cast<char>(c)) != std::string_view::npos;
  });
}

/// A string, or every string of an array (npm prints `ca[]=` as an array).
std::vector<std::string> Strings(const nlohmann::json& v) {
  std::vector<std::string> out;
  if (v.is_string()) out.push_back(v.get<std::string>());
  if (v.is_array()) {
    for (const auto& e : v) {
      if (e.is_string()) out.push_back(e.get<std::string>());
    }
  }
  return out;
}

std::string Joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

/// Stores `value` of `key` in `config` when it is a key the cells need.
void Keep(NpmConfig* config, std::string_view key, const nlohmann::json& value) {
  auto text = [&] { return value.is_string() ? value.get<std::string>() : std::string(); };
  if (key == "registry") config->registry = text();
  else if (IsScopeRegistryKey(key) && value.is_string()) config->scopes[std::string(key.substr(0, key.find(':')))] = text();
  else if (key == "cafile") config->cafile = text();
  else if (key == "ca") config->ca = Strings(value);
  else if (key == "strict-ssl" && value.is_boolean()) config->strict_ssl = value.get<bool>();
  else if (key == "proxy") config->proxy = text();
  else if (key == "https-proxy") config->https_proxy = text();
  else if (key == "noproxy") config->noproxy = Joined(Strings(value));
}

/// The host name of a normalised URL ("scheme://host[:port]/..."), lower case.
std::string UrlHost(const std::string& url) {
  std::string origin = RegistryOrigin(url);
  std::size_t start = origin.find("://");
  std::string host = start == std::string::npos ? origin : origin.substr(start + 3);
  std::size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.find(']', colon) == std::string::npos) host.resize(colon);
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
  return host;
}

/// npm's isNoProxy (@npmcli/agent lib/proxy.js): an entry matches a host
/// (lower case, as URL parsing leaves it) that ends in all of its
/// dot-separated labels, compared as written. As there, the host keeps its
/// empty labels ("localhost." ends in "", so noproxy=localhost does not
/// match it: npm proxies it, adv5) and the entry drops its own.
bool NoProxyMatches(const std::string& host, const std::string& list) {
  auto labels = [](std::string_view name, bool keep_empty) {
    std::vector<std::string> out;
    for (std::size_t at = 0; at <= name.size();) {
      std::size_t dot = std::min(name.find('.', at), name.size());
      if (dot > at || keep_empty) out.emplace_back(name.substr(at, dot - at));
      at = dot + 1;
    }
    std::reverse(out.begin(), out.end());
    return out;
  };
  const auto host_labels = labels(host, true);
  for (std::size_t at = 0; at <= list.size();) {
    std::size_t comma = std::min(list.find(',', at), list.size());
    std::string entry = list.substr(at, comma - at);
    at = comma + 1;
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    auto want = labels(entry, false);
    if (want.empty() || want.size() > host_labels.size()) continue;
    if (std::equal(want.begin(), want.end(), host_labels.begin())) return true;
  }
  return false;
}

/// A host npm's URL parser leaves as written: DNS labels of [a-z0-9-], or
/// a dotted quad of decimal octets without leading zeros.
bool PlainHost(const std::string& host) {
  std::vector<std::string_view> labels;
  for (std::size_t at = 0; at <= host.size();) {
    std::size_t dot = std::min(host.find('.', at), host.size());
    labels.push_back(std::string_view(host).substr(at, dot - at));
    at = dot + 1;
  }
  bool numeric = true;
  for (std::string_view l : labels) {
    if (l.empty() || l.size() > 63) return false;
    for (char c : l) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    }
    numeric = numeric && l.find_first_not_of("0123456789") == std::string_view::npos;
  }
  if (!numeric) return !(labels.back().find_first_not_of("0123456789") == std::string_view::npos);
  if (labels.size() != 4) return false;
  for (std::string_view l : labels) {
    if (l.size() > 3 || (l.size() > 1 && l[0] == '0') || std::stoi(std::string(l)) > 255) return false;
  }
  return true;
}

/// "setting (scheme://host:port)" of a proxy URL, or just the setting when
/// it is no URL: never the user or password it may carry.
std::string NameProxy(const std::string& setting, const std::string& proxy) {
  auto url = NormalizeRegistryUrl(proxy);
  return url.ok() ? setting + " (" + RegistryOrigin(*url) + ")" : setting;
}

}  // namespace

Result<NpmConfig> NpmConfigFromList(std::string_view listing) {
  NpmConfig config;
  bool have_registry = false;
  std::set<std::string_view> effective;
  std::size_t at = 0;
  while (at < listing.size()) {
    std::size_t end = std::min(listing.find('\n', at), listing.size());
    std::string_view line = listing.substr(at, end - at);
    at = end + 1;
    // "; key = value ; overridden by user" is a value that does not apply.
    std::size_t eq = line.find(" = ");
    if (line.empty() || line[0] == ';' || eq == std::string_view::npos) continue;
    std::string_view key = line.substr(0, eq);
    // npm prints one effective line per key, and names as they are: a
    // second one was made by a name holding a line break (an npmrc's
    // "zz\nregistry"=..., a variable npm_config_zz<LF>registry), written to
    // be read as the registry, strict-ssl or cafile (adv15).
    if (!effective.insert(key).second) {
      return MakeError("read npm's settings", "npm config list -l",
                       "it prints `" + VisibleOnTerminal(key) +
                           "` twice: a setting's name holds a line break (an npmrc key in quotes, or an npm_config_* "
                           "variable's name); remove it");
    }
    // Values are JSON; "(protected)" (a token) is not, and is never read.
    nlohmann::json value = nlohmann::json::parse(line.substr(eq + 3), nullptr, false);
    if (value.is_discarded()) continue;
    have_registry = have_registry || (key == "registry" && value.is_string());
    Keep(&config, key, value);
  }
  if (!have_registry) {
    return MakeError("read npm's registry", "npm config list -l", "no `registry = \"...\"` line in its output");
  }
  return config;
}

Result<std::string> RegistryFromConfigList(std::string_view listing) {
  auto config = NpmConfigFromList(listing);
  if (!config.ok()) return config.error();
  return config->registry;
}

std::map<std::string, std::string> NpmProxyEnvironment(char** env) {
  std::map<std::string, std::string> out;
  for (char** e = env; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name(entry.substr(0, eq));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name == "https_proxy" || name == "http_proxy" || name == "proxy" || name == "no_proxy") {
      out[name] = std::string(entry.substr(eq + 1));
    }
  }
  return out;
}

std::string NpmProxyFor(const std::string& url, const NpmConfig& config,
                        const std::map<std::string, std::string>& env) {
  auto get = [&env](const char* name) {
    auto it = env.find(name);
    return it == env.end() ? std::string() : it->second;
  };
  std::string setting, proxy;
  if (!config.https_proxy.empty()) setting = "npm config https-proxy", proxy = config.https_proxy;
  else if (!config.proxy.empty()) setting = "npm config proxy", proxy = config.proxy;
  else if (!get("https_proxy").empty()) setting = "environment variable HTTPS_PROXY", proxy = get("https_proxy");
  else if (url.rfind("http://", 0) == 0 && !get("http_proxy").empty()) setting = "environment variable HTTP_PROXY", proxy = get("http_proxy");
  else if (url.rfind("http://", 0) == 0 && !get("proxy").empty()) setting = "environment variable PROXY", proxy = get("proxy");
  if (proxy.empty()) return {};
  const std::string host = UrlHost(url);
  // npm compares the host its URL parser normalised (2130706433 reads as
  // 127.0.0.1, IPv6 is compressed): a host written any other way than a
  // plain name or dotted quad is taken as proxied, never opened (adv5).
  if (!PlainHost(host)) return NameProxy(setting, proxy);
  const std::string noproxy = config.noproxy.empty() ? get("no_proxy") : config.noproxy;
  if (NoProxyMatches(host, noproxy)) return {};
  return NameProxy(setting, proxy);
}

}  // namespace mcpcell
