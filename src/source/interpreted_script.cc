#include "source/interpreted_script.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>

#include "util/path_search.h"
#include "util/percent_decode.h"
#include "util/shell_quote.h"

namespace mcpcell {
namespace {

using Words = std::vector<std::string_view>;

/// How one interpreter's command line reads. Long options may carry their
/// value after '='; single-dash words not listed whole are read letter by
/// letter (python -uB, bash -eu), but only for interpreters that combine.
struct Syntax {
  Words names;           ///< basenames of argv[0]
  std::string_view run;  ///< a subcommand before the script ("run"), "" = none
  bool run_required = false;
  Words subcommands;     ///< a first word that is no script (node inspect F): not read
  Words values;          ///< options that take the next word as a value
  Words paths;           ///< of `values`: the value is a file or module found from the cwd
  Words flags;           ///< options that take none
  Words flag_prefixes;   ///< option families that take none, or a value only after '='
  Words code;            ///< the next word is code to run (-e)
  Words modules;         ///< the next word is a module to run (-m)
  Words script_options;  ///< the next word is the script (php -f)
  std::string_view letters;        ///< combinable single letters without a value
  std::string_view value_letters;  ///< letters whose value is the rest or the next word
  std::string_view code_letters;   ///< letters whose code is the rest or the next word
  std::string_view module_letters;
};

// Each row names only the fields its interpreter has; GCC 12 warns about
// every field a designated initializer leaves to its default. The value-less
// lists hold only what the interpreter's manual documents as value-less: one
// that took a value would make the value read as the script (broader).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const std::vector<Syntax>& Syntaxes() {
  static const std::vector<Syntax> all = {
      {.names = {"node", "nodejs"},
       .subcommands = {"inspect"},
       .values = {"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions",
                  "--input-type", "--env-file", "--title", "--inspect-port", "--experimental-default-type"},
       .paths = {"-r", "--require", "--import", "--loader", "--experimental-loader", "--env-file"},
       .flags = {"--no-warnings", "--enable-source-maps", "--trace-warnings", "--trace-uncaught", "--expose-gc",
                 "--no-deprecation", "--throw-deprecation", "--trace-deprecation", "--pending-deprecation",
                 "--experimental-vm-modules", "--experimental-strip-types", "--experimental-transform-types",
                 "--preserve-symlinks", "--preserve-symlinks-main", "--abort-on-uncaught-exception",
                 "--inspect", "--inspect-brk", "--watch", "--harmony", "--no-experimental-fetch"},
       .code = {"-e", "--eval", "-p", "--print"}},
      {.names = {"tsx", "ts-node"},
       .subcommands = {"watch"},
       .values = {"--tsconfig", "--import", "-r", "--require", "-P", "--project"},
       .paths = {"--tsconfig", "--import", "-r", "--require", "-P", "--project"},
       .flags = {"--no-cache", "-T", "--transpile-only", "--esm"},
       .code = {"-e", "--eval", "-p", "--print"}},
      {.names = {"deno"},
       .run = "run",
       .run_required = true,
       .values = {"-c", "--config", "--import-map", "--cert", "--location", "--seed"},
       .paths = {"-c", "--config", "--import-map", "--cert"},
       .flags = {"-A", "--allow-all", "--no-check", "--quiet", "-q", "--no-prompt", "-r", "--reload",
                 "--cached-only", "--no-remote", "--no-npm"},
       // --env-file[=FILE] and --lock[=FILE]: a value only after '=' (deno's help).
       .flag_prefixes = {"--allow-", "--deny-", "--unstable", "--v8-flags=", "--env-file", "--lock"}},
      {.names = {"bun"},
       .run = "run",
       .subcommands = {"x", "test", "build", "install", "i", "add", "a", "remove", "rm", "update", "create", "c",
                       "pm", "upgrade", "repl", "exec", "link", "unlink", "init", "outdated", "publish", "patch",
                       "audit", "info", "why"},
       .values = {"-r", "--preload", "-c", "--config", "--env-file"},
       .paths = {"-r", "--preload", "-c", "--config", "--env-file"},
       .flags = {"--smol", "--hot", "--watch", "-b", "--bun", "--no-install"},
       .code = {"-e", "--eval", "-p", "--print"}},
      {.names = {"python", "python2", "python3", "pypy", "pypy3"},
       .letters = "bBdEhiIOPqsSuvVx",
       .value_letters = "WX",
       .code_letters = "c",
       .module_letters = "m"},
      {.names = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "ksh93", "lksh", "posh", "yash"},
       .values = {"-o", "--rcfile", "--init-file"},
       .paths = {"--rcfile", "--init-file"},
       .flags = {"--norc", "--noprofile", "--login", "--posix", "--noediting"},
       .letters = "aefhklmnpruvxBCEHPT",
       .code_letters = "c"},
      // ruby -C DIR changes the directory the script is found in: not read.
      {.names = {"ruby"}, .values = {"-r", "-I"}, .paths = {"-r", "-I"}, .letters = "wWdv", .code_letters = "e"},
      {.names = {"perl"}, .letters = "wWtTsaln", .code_letters = "eE"},
      {.names = {"php"}, .values = {"-d", "-c"}, .paths = {"-c"}, .flags = {"-n", "-q"}, .code = {"-r"},
       .script_options = {"-f"}},
  };
  return all;
}
#pragma GCC diagnostic pop

/// Programs whose argv[0] says nothing of what they start (npx PKG, env
/// node x.js, poetry run python x.py): their source is the whole command
/// line. Being listed only ever makes a source longer.
constexpr std::string_view kLaunchers[] = {
    "npx", "pnpx", "pnpm", "yarn", "bunx", "uvx", "uv", "pipx", "pipenv", "poetry", "pdm", "hatch", "rye",
    "conda", "mamba", "micromamba", "pixi", "tox", "nox", "env", "java", "docker", "podman", "sudo", "doas",
    "nice", "ionice", "chrt", "taskset", "timeout", "nohup", "setsid", "stdbuf", "exec", "xargs", "flock",
    "busybox", "npm", "corepack", "rustup", "cargo", "go", "dotnet", "mvn", "gradle", "sbt", "make", "just",
    "bundle", "bundler", "rake", "lua", "luajit", "Rscript", "R", "julia", "elixir", "mix", "erl", "escript",
    "tclsh", "pwsh", "awk", "gawk", "mawk", "nodemon", "ts-node-dev", "pm2", "forever", "strace", "ltrace",
    "gdb", "valgrind", "xvfb-run", "script", "unbuffer", "watch", "parallel", "firejail", "bwrap", "nsenter",
    "unshare", "chroot", "ssh", "su", "runuser", "sg", "systemd-run", "time", "perf"};

bool In(const Words& words, std::string_view w) { return std::find(words.begin(), words.end(), w) != words.end(); }

const Syntax* SyntaxOf(std::string_view base) {
  for (const auto& s : Syntaxes()) {
    if (In(s.names, base)) return &s;
  }
  // python3.12, pypy3.10, perl5.36.0, ruby3.1, php8.2, node20: the family's
  // syntax (adv13: perl5.36.0 -e CODE was judged as a plain program).
  for (std::string_view family : {"python", "pypy", "perl", "ruby", "php", "node"}) {
    if (base.rfind(family, 0) == 0 && base.size() > family.size() &&
        base.find_first_not_of("0123456789.", family.size()) == std::string_view::npos) {
      return SyntaxOf(family);
    }
  }
  return nullptr;
}

/// Interpreters that read a config of their own from the cwd (tsconfig.json,
/// bunfig.toml's preload, deno.json, php.ini): the cwd is part of every
/// source of theirs (adv11).
bool ReadsCwdConfig(const Syntax& s) {
  for (std::string_view n : {"tsx", "ts-node", "deno", "bun", "php"}) {
    if (In(s.names, n)) return true;
  }
  return false;
}

std::string Absolute(const std::string& word, const std::string& cwd) {
  if (word.empty() || word.front() == '/' || cwd.empty()) return std::filesystem::path(word).lexically_normal().string();
  return (std::filesystem::path(cwd) / word).lexically_normal().string();
}

/// The program as the source names it: the file that runs. A path is made
/// absolute; a bare name is the file the one PATH lookup finds (a trusted
/// `node` was whatever `node` came first on the caller's PATH, adv10), or
/// the name when nothing is found (nothing will run).
std::string ProgramWord(const std::string& argv0, const std::string& cwd) {
  if (argv0.find('/') != std::string::npos) return Absolute(argv0, cwd);
  std::string found = FindOnHostPath(argv0);
  return found.empty() ? argv0 : found;
}

/// Where the reading of argv stopped, and what of it depends on the cwd.
struct Reading {
  enum class What { kScript, kCode, kModule, kUnread } what = What::kUnread;
  std::size_t last = 0;                       ///< argv index of the word that says what runs
  std::map<std::size_t, std::string> words;   ///< argv index → the word as the source writes it
  bool needs_cwd = false;                     ///< something resolves against the cwd
  const std::vector<std::string>* argv = nullptr;
  const std::string* cwd = nullptr;

  /// Decided: `w` at argv[at]. True, for ReadOption's "stop reading".
  bool Stop(What w, std::size_t at) {
    what = w;
    last = at;
    return true;
  }
  /// A file or module an option names: absolute when it is a path, else
  /// found from the cwd (a module name), which the source must then say.
  void PathValue(std::size_t at, std::string_view prefix) {
    const std::string& w = (*argv)[at];
    std::string value = w.substr(prefix.size());
    // A URL is not a path under the cwd (adv13: `--import file:///tmp/x`
    // was judged as CWD/file:/tmp/x): a file: URL is the path it names, any
    // other (data: is inline code) stays as written.
    if (auto file = FileUrlPath(value)) {
      value = *file;
      words[at] = std::string(prefix) + Absolute(value, *cwd);
    } else if (HasUrlScheme(value)) {
      // as written
    } else if (value.find('/') == std::string::npos) {
      needs_cwd = true;
    } else {
      words[at] = std::string(prefix) + Absolute(value, *cwd);
    }
    AddName(value);  // `node -r F S` runs F too: a deny rule by name sees it (adv11)
  }
  /// A word that may name a file that runs, for deny rules by name.
  void AddName(const std::string& w) {
    if (w.empty()) return;
    names.push_back(w);
    names.push_back(std::filesystem::path(w).filename().string());
    if (w.find('/') != std::string::npos) names.push_back(Absolute(w, *cwd));
  }
  std::vector<std::string> names;  ///< InterpretedScript::maybe_names
};

/// One option word at *i; returns when it decides what runs (r->last set),
/// else advances *i past the option (and its value).
bool ReadOption(const Syntax& s, Reading* r, std::size_t* i) {
  const auto& argv = *r->argv;
  std::string_view w = argv[*i];
  std::size_t eq = w.rfind("--", 0) == 0 ? w.find('=') : std::string_view::npos;
  std::string_view name = w.substr(0, eq);
  bool attached = eq != std::string_view::npos;
  std::size_t value_at = attached ? *i : *i + 1;
  if (In(s.code, name)) return r->Stop(Reading::What::kCode, value_at);
  if (In(s.modules, name)) return r->Stop(Reading::What::kModule, value_at);
  if (In(s.script_options, name)) {
    return attached ? r->Stop(Reading::What::kUnread, 0) : r->Stop(Reading::What::kScript, value_at);
  }
  if (In(s.values, name)) {
    if (In(s.paths, name) && value_at < argv.size()) {
      r->PathValue(value_at, attached ? w.substr(0, eq + 1) : std::string_view());
    }
    *i = value_at + 1;
    return false;
  }
  bool prefixed = std::any_of(s.flag_prefixes.begin(), s.flag_prefixes.end(),
                              [&](std::string_view p) { return name.rfind(p, 0) == 0; });
  if (In(s.flags, name) || prefixed) {
    if (attached && !prefixed) return r->Stop(Reading::What::kUnread, 0);  // a value the table does not know
    ++*i;
    return false;
  }
  if (w.rfind("--", 0) == 0 || (s.letters.empty() && s.value_letters.empty() && s.code_letters.empty())) {
    return r->Stop(Reading::What::kUnread, 0);
  }
  for (std::size_t k = 1; k < w.size(); ++k) {
    char c = w[k];
    bool rest = k + 1 < w.size();
    if (s.letters.find(c) != std::string_view::npos) continue;
    if (s.code_letters.find(c) != std::string_view::npos) return r->Stop(Reading::What::kCode, rest ? *i : *i + 1);
    if (s.module_letters.find(c) != std::string_view::npos) return r->Stop(Reading::What::kModule, rest ? *i : *i + 1);
    if (s.value_letters.find(c) != std::string_view::npos) {
      // `-X pycache_prefix=pc`: a relative path after '=' resolves against
      // the cwd (python loads bytecode from there, adv11).
      std::string value = rest ? std::string(w.substr(k + 1)) : (*i + 1 < argv.size() ? argv[*i + 1] : "");
      std::size_t set = value.find('=');
      if (set != std::string::npos && set + 1 < value.size() && value[set + 1] != '/') r->needs_cwd = true;
      *i = rest ? *i + 1 : *i + 2;
      return false;
    }
    return r->Stop(Reading::What::kUnread, 0);
  }
  ++*i;
  return false;
}

void Read(const Syntax& s, Reading* r) {
  const auto& argv = *r->argv;
  std::size_t i = 1;
  if (!s.run.empty()) {
    if (i < argv.size() && argv[i] == s.run) ++i;
    else if (s.run_required) return;
  }
  while (i < argv.size()) {
    const std::string& w = argv[i];
    if (w == "--") {
      if (i + 1 < argv.size()) r->Stop(Reading::What::kScript, i + 1);
      return;
    }
    // `bash +x s.sh`, `sh +o posix`: an option, not the script; "-": stdin.
    if (w.empty() || w[0] == '+' || w == "-") return;
    if (w[0] != '-') {
      if (!In(s.subcommands, w)) r->Stop(Reading::What::kScript, i);
      return;
    }
    if (ReadOption(s, r, &i)) return;
  }
}

std::string Joined(const std::vector<std::string>& argv, std::size_t last, const Reading& r) {
  std::string out = "command://";
  if (r.needs_cwd && !r.cwd->empty()) out += "cd " + ShellQuote(*r.cwd) + " && ";
  for (std::size_t i = 0; i <= last && i < argv.size(); ++i) {
    auto it = r.words.find(i);
    out += (i == 0 ? "" : " ") + ShellQuote(it != r.words.end() ? it->second : argv[i]);
  }
  return out;
}

/// Every word of an unread command line that is no option, and the value
/// of every `--opt=VALUE`: any may be what runs, so a deny rule by name may
/// match it.
void AddUnreadNames(const std::vector<std::string>& argv, Reading* r) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& w = argv[i];
    if (w.empty()) continue;
    if (w[0] == '-' || w[0] == '+') {
      if (std::size_t eq = w.find('='); eq != std::string::npos) r->AddName(w.substr(eq + 1));
      continue;
    }
    r->AddName(w);
  }
}

/// The words of inline code (`bash -c F`, `node -e "require('./x')"`): any
/// may name a file that runs.
void AddCodeNames(const std::string& code, Reading* r) {
  std::size_t i = 0;
  while (i < code.size()) {
    std::size_t end = code.find_first_of(" \t\n;|&()'\"`", i);
    if (end == std::string::npos) end = code.size();
    if (end > i) r->AddName(code.substr(i, end - i));
    i = end + 1;
  }
}

}  // namespace

std::optional<std::string> FileUrlPath(std::string_view v) {
  if (v.substr(0, 5) != "file:") return std::nullopt;
  std::string_view rest = v.substr(5);
  if (rest.substr(0, 2) == "//") {
    rest.remove_prefix(2);
    std::size_t slash = rest.find('/');
    std::string_view host = rest.substr(0, slash);
    if (slash == std::string_view::npos || (!host.empty() && host != "localhost")) return std::nullopt;
    rest.remove_prefix(slash);
  }
  if (rest.empty() || rest.front() != '/') return std::nullopt;
  return PercentDecoded(rest);
}

bool HasUrlScheme(std::string_view v) {
  std::size_t colon = v.find(':');
  if (colon == std::string_view::npos || colon < 2 || !std::isalpha(static_cast<unsigned char>(v[0]))) return false;
  return std::all_of(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
  });
}

std::optional<InterpretedScript> InterpretedScriptOf(const std::vector<std::string>& argv, const std::string& cwd) {
  if (argv.empty()) return std::nullopt;
  std::string base = std::filesystem::path(argv[0]).filename().string();
  const Syntax* syntax = SyntaxOf(base);
  bool launcher = std::find(std::begin(kLaunchers), std::end(kLaunchers), base) != std::end(kLaunchers);
  if (syntax == nullptr && !launcher) {
    // A link under another name runs what it points to (adv13: a symlink
    // to perl as /usr/bin/x). A hard link is not told by its name.
    std::error_code ec;
    auto real = std::filesystem::canonical(ProgramWord(argv[0], cwd), ec);
    if (!ec) {
      base = real.filename().string();
      syntax = SyntaxOf(base);
      launcher = std::find(std::begin(kLaunchers), std::end(kLaunchers), base) != std::end(kLaunchers);
    }
  }
  if (syntax == nullptr && !launcher) return std::nullopt;
  Reading r;
  r.argv = &argv;
  r.cwd = &cwd;
  r.words[0] = ProgramWord(argv[0], cwd);
  if (syntax != nullptr) {
    Read(*syntax, &r);
    r.needs_cwd = r.needs_cwd || ReadsCwdConfig(*syntax);
  }
  InterpretedScript out;
  if (r.what == Reading::What::kUnread || r.last >= argv.size()) {
    // Whatever it runs may resolve against the cwd: the source says which.
    r.needs_cwd = true;
    out.source = Joined(argv, argv.size() - 1, r);
    AddUnreadNames(argv, &r);
    out.maybe_names = std::move(r.names);
    return out;
  }
  const std::string& word = argv[r.last];
  if (r.what == Reading::What::kScript) {
    out.script = word;
    out.script_path = Absolute(word, cwd);
    r.words[r.last] = out.script_path;
  } else if (r.what == Reading::What::kCode) {
    r.needs_cwd = true;  // `node -e "require('./x')"` finds ./x in the cwd
    // "-cCODE" or "-c CODE": the code is what follows the letter.
    std::string code = word;
    if (word.rfind("--", 0) == 0) code = word.substr(word.find('=') + 1);
    else if (word.rfind("-", 0) == 0) code = word.substr(word.find_first_not_of('-') + 1);
    AddCodeNames(code, &r);
  } else if (r.what == Reading::What::kModule) {
    // "-mpkg" or "-m pkg": the module is what follows the letter. Python
    // puts the cwd first on sys.path, so the cwd is part of what runs.
    out.module = word.rfind("-", 0) == 0 ? word.substr(word.find('m') + 1) : word;
    r.needs_cwd = true;
  }
  out.source = Joined(argv, r.last, r);
  out.maybe_names = std::move(r.names);
  return out;
}

std::string PlainCommandSource(const std::string& argv0, const std::string& cwd) {
  return "command://" + ShellQuote(ProgramWord(argv0, cwd));
}

std::string CurrentDirectory() {
  char buf[4096];
  return ::getcwd(buf, sizeof buf) != nullptr ? buf : "";
}

}  // namespace mcpcell
