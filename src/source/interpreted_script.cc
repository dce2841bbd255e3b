#include "source/interpreted_script.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string_view>

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
  Words values;          ///< options that take the next word as a value
  Words flags;           ///< options that take none
  Words flag_prefixes;   ///< option families that take none (deno --allow-*)
  Words code;            ///< the next word is code to run (-e)
  Words modules;         ///< the next word is a module to run (-m)
  std::string_view letters;        ///< combinable single letters without a value
  std::string_view value_letters;  ///< letters whose value is the rest or the next word
  std::string_view code_letters;   ///< letters whose code is the rest or the next word
  std::string_view module_letters;
};

// Each row names only the fields its interpreter has; GCC 12 warns about
// every field a designated initializer leaves to its default.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const std::vector<Syntax>& Syntaxes() {
  static const std::vector<Syntax> all = {
      {.names = {"node", "nodejs"},
       .values = {"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions",
                  "--input-type", "--env-file", "--title", "--inspect-port", "--experimental-default-type"},
       .flags = {"--no-warnings", "--enable-source-maps", "--trace-warnings", "--trace-uncaught", "--expose-gc",
                 "--no-deprecation", "--throw-deprecation", "--trace-deprecation", "--pending-deprecation",
                 "--experimental-vm-modules", "--experimental-strip-types", "--experimental-transform-types",
                 "--preserve-symlinks", "--preserve-symlinks-main", "--abort-on-uncaught-exception",
                 "--inspect", "--inspect-brk", "--watch", "--harmony", "--no-experimental-fetch"},
       .code = {"-e", "--eval", "-p", "--print"}},
      {.names = {"tsx", "ts-node"},
       .values = {"--tsconfig", "--import", "-r", "--require", "-P", "--project"},
       .flags = {"--no-cache", "--watch", "-T", "--transpile-only", "--esm"},
       .code = {"-e", "--eval", "-p", "--print"}},
      {.names = {"deno"},
       .run = "run",
       .run_required = true,
       .values = {"-c", "--config", "--import-map", "--lock", "--cert", "--location", "--seed", "--env-file"},
       .flags = {"-A", "--allow-all", "--no-check", "--quiet", "-q", "--no-prompt", "-r", "--reload",
                 "--cached-only", "--no-remote", "--no-npm"},
       .flag_prefixes = {"--allow-", "--deny-", "--unstable", "--v8-flags="}},
      {.names = {"bun"},
       .run = "run",
       .values = {"-r", "--preload", "-c", "--config", "--env-file", "--cwd"},
       .flags = {"--smol", "--hot", "--watch", "-b", "--bun", "--no-install"},
       .code = {"-e", "--eval", "-p", "--print"}},
      {.names = {"python", "python2", "python3", "pypy", "pypy3"},
       .letters = "bBdEhiIOPqsSuvVx",
       .value_letters = "WX",
       .code_letters = "c",
       .module_letters = "m"},
      {.names = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"},
       .values = {"-o", "--rcfile", "--init-file"},
       .flags = {"--norc", "--noprofile", "--login", "--posix", "--noediting"},
       .letters = "aefhklmnpruvxBCEHPT",
       .code_letters = "c"},
      {.names = {"ruby"}, .values = {"-r", "-I", "-C"}, .letters = "wWdv", .code_letters = "e"},
      {.names = {"perl"}, .letters = "wWtTsaln", .value_letters = "IMm", .code_letters = "eE"},
      {.names = {"php"}, .values = {"-d", "-c"}, .flags = {"-n", "-q"}, .code = {"-r"}, .modules = {"-f"}},
  };
  return all;
}
#pragma GCC diagnostic pop

/// Launchers whose argv[0] says nothing of what they start (npx PKG, env
/// node x.js, uv run, java -jar): their source is the whole command line.
constexpr std::string_view kLaunchers[] = {
    "npx", "pnpx", "pnpm", "yarn", "bunx", "uvx", "uv", "pipx", "env", "java", "docker", "podman",
    "sudo", "doas", "nice", "ionice", "chrt", "taskset", "timeout", "nohup", "setsid", "stdbuf",
    "exec", "xargs", "flock", "busybox", "npm", "corepack", "rustup", "cargo", "go", "dotnet"};

bool In(const Words& words, std::string_view w) { return std::find(words.begin(), words.end(), w) != words.end(); }

const Syntax* SyntaxOf(std::string_view base) {
  for (const auto& s : Syntaxes()) {
    if (In(s.names, base)) return &s;
  }
  // python3.12, pypy3.10: the family's syntax.
  for (std::string_view family : {"python", "pypy"}) {
    if (base.rfind(family, 0) == 0 && base.size() > family.size() &&
        base.find_first_not_of("0123456789.", family.size()) == std::string_view::npos) {
      return SyntaxOf(family);
    }
  }
  return nullptr;
}

/// Where the parse of argv stopped.
struct Stop {
  enum class What { kScript, kCode, kModule, kUnread } what = What::kUnread;
  std::size_t last = 0;  ///< argv index of the word that says what runs
};

/// One option word at argv[i]; returns the stop when it decides what runs,
/// else advances *i past the option (and its value).
std::optional<Stop> ReadOption(const Syntax& s, const std::vector<std::string>& argv, std::size_t* i) {
  std::string_view w = argv[*i];
  std::size_t eq = w.rfind("--", 0) == 0 ? w.find('=') : std::string_view::npos;
  std::string_view name = w.substr(0, eq);
  bool attached = eq != std::string_view::npos;
  std::size_t value_at = attached ? *i : *i + 1;
  if (In(s.code, name)) return Stop{Stop::What::kCode, value_at};
  if (In(s.modules, name)) return Stop{Stop::What::kModule, value_at};
  if (In(s.values, name)) { *i = value_at + 1; return std::nullopt; }
  bool prefixed = std::any_of(s.flag_prefixes.begin(), s.flag_prefixes.end(),
                              [&](std::string_view p) { return name.rfind(p, 0) == 0; });
  if (In(s.flags, name) || prefixed) {
    if (attached && !prefixed) return Stop{};  // a flag given a value: not what the table knows
    ++*i;
    return std::nullopt;
  }
  if (w.rfind("--", 0) == 0 || (s.letters.empty() && s.value_letters.empty() && s.code_letters.empty())) return Stop{};
  for (std::size_t k = 1; k < w.size(); ++k) {
    char c = w[k];
    bool rest = k + 1 < w.size();
    if (s.letters.find(c) != std::string_view::npos) continue;
    if (s.code_letters.find(c) != std::string_view::npos) return Stop{Stop::What::kCode, rest ? *i : *i + 1};
    if (s.module_letters.find(c) != std::string_view::npos) return Stop{Stop::What::kModule, rest ? *i : *i + 1};
    if (s.value_letters.find(c) != std::string_view::npos) { *i = rest ? *i + 1 : *i + 2; return std::nullopt; }
    return Stop{};
  }
  ++*i;
  return std::nullopt;
}

Stop Read(const Syntax& s, const std::vector<std::string>& argv) {
  std::size_t i = 1;
  if (!s.run.empty()) {
    if (i < argv.size() && argv[i] == s.run) ++i;
    else if (s.run_required) return Stop{};
  }
  while (i < argv.size()) {
    const std::string& w = argv[i];
    if (w == "--") {
      return i + 1 < argv.size() ? Stop{Stop::What::kScript, i + 1} : Stop{};
    }
    // `bash +x s.sh`, `sh +o posix`: an option, not the script.
    if (!w.empty() && w[0] == '+') return Stop{};
    if (w.size() < 2 || w[0] != '-') {
      return w == "-" ? Stop{} : Stop{Stop::What::kScript, i};  // "-": the script is read from stdin
    }
    if (auto stop = ReadOption(s, argv, &i)) return *stop;
  }
  return Stop{};
}

std::string Joined(const std::vector<std::string>& argv, std::size_t last, const std::string& final_word) {
  std::string out = "command://";
  for (std::size_t i = 0; i <= last && i < argv.size(); ++i) {
    out += (i == 0 ? "" : " ") + ShellQuote(i == last ? final_word : argv[i]);
  }
  return out;
}

}  // namespace

std::optional<InterpretedScript> InterpretedScriptOf(const std::vector<std::string>& argv, const std::string& cwd) {
  if (argv.empty()) return std::nullopt;
  std::string base = std::filesystem::path(argv[0]).filename().string();
  const Syntax* syntax = SyntaxOf(base);
  bool launcher = std::find(std::begin(kLaunchers), std::end(kLaunchers), base) != std::end(kLaunchers);
  if (syntax == nullptr && !launcher) return std::nullopt;
  InterpretedScript out;
  Stop stop = syntax != nullptr ? Read(*syntax, argv) : Stop{};
  if (stop.what == Stop::What::kUnread || stop.last >= argv.size()) {
    out.source = Joined(argv, argv.size() - 1, argv.back());
    return out;
  }
  const std::string& word = argv[stop.last];
  std::string final_word = word;
  if (stop.what == Stop::What::kScript) {
    out.script = word;
    out.script_path = word.front() == '/' || cwd.empty()
                          ? std::filesystem::path(word).lexically_normal().string()
                          : (std::filesystem::path(cwd) / word).lexically_normal().string();
    final_word = out.script_path;
  } else if (stop.what == Stop::What::kModule) {
    // "-mpkg" or "-m pkg": the module is what follows the letter.
    out.module = word.rfind("-", 0) == 0 ? word.substr(word.find('m') + 1) : word;
  }
  out.source = Joined(argv, stop.last, final_word);
  return out;
}

std::string CurrentDirectory() {
  char buf[4096];
  return ::getcwd(buf, sizeof buf) != nullptr ? buf : "";
}

}  // namespace mcpcell
