#include "util/code_injecting_env.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace mcpcell {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  return std::equal(prefix.begin(), prefix.end(), s.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
}

// Whole families, by prefix: the program reads many names of the family and
// new ones appear with new versions, so naming them one by one would miss some.
constexpr std::array kPrefixes = {
    // The dynamic loader (ld.so(8)): LD_PRELOAD, LD_AUDIT map a library into
    // every dynamically linked program; LD_LIBRARY_PATH replaces the ones it asks for.
    std::string_view("LD_"),
    // Python reads PYTHONPATH/PYTHONHOME (where modules come from),
    // PYTHONSTARTUP, PYTHONWARNINGS and PYTHONBREAKPOINT (which import a
    // module by name), PYTHONUSERBASE, PYTHONPYCACHEPREFIX (cached bytecode).
    std::string_view("PYTHON"),
    // Perl: PERL5OPT (-M modules), PERL5LIB/PERLLIB, PERL5DB (the debugger's code).
    std::string_view("PERL"),
    // Git runs the commands of any config it is given: GIT_CONFIG,
    // GIT_CONFIG_GLOBAL/SYSTEM files, GIT_CONFIG_PARAMETERS and
    // GIT_CONFIG_KEY_n/VALUE_n (core.fsmonitor, core.sshCommand, aliases).
    std::string_view("GIT_CONFIG"),
    // Bash imports exported functions from BASH_FUNC_NAME%% variables.
    std::string_view("BASH_FUNC_"),
    // .NET loads DOTNET_STARTUP_HOOKS assemblies and CORECLR_PROFILER libraries.
    std::string_view("DOTNET_STARTUP_HOOKS"),
    std::string_view("CORECLR_"),
    // Package managers run what their settings name: corepack runs the
    // package manager it finds in COREPACK_HOME (or fetches from
    // COREPACK_NPM_REGISTRY), yarn runs its yarnPath (YARN_YARN_PATH) and
    // plugins, deno and bun load cached modules from DENO_DIR / BUN_INSTALL (adv13).
    std::string_view("COREPACK_"), std::string_view("YARN_"), std::string_view("DENO_"), std::string_view("BUN_"),
};

// Single names.
constexpr std::array kNames = {
    // glibc: GCONV_PATH loads iconv modules (shared objects); GLIBC_TUNABLES
    // has been a loader exploit (CVE-2023-4911).
    std::string_view("GCONV_PATH"), std::string_view("GLIBC_TUNABLES"),
    // Node: NODE_OPTIONS (--require, --import, --loader), NODE_PATH (where
    // require() looks), NODE_REPL_EXTERNAL_MODULE (loaded instead of the REPL).
    std::string_view("NODE_OPTIONS"), std::string_view("NODE_PATH"), std::string_view("NODE_REPL_EXTERNAL_MODULE"),
    // Shells: bash runs $BASH_ENV, sh/dash and ksh run $ENV at start;
    // SHELLOPTS/BASHOPTS turn on options (xtrace) that make PS4 run
    // command substitutions; zsh reads its startup files from ZDOTDIR.
    std::string_view("BASH_ENV"), std::string_view("ENV"), std::string_view("SHELLOPTS"), std::string_view("BASHOPTS"),
    std::string_view("PS4"), std::string_view("ZDOTDIR"),
    // Ruby: RUBYOPT (-r libraries), RUBYLIB; gems from GEM_HOME/GEM_PATH,
    // bundler's Gemfile (Ruby code) from BUNDLE_GEMFILE.
    std::string_view("RUBYOPT"), std::string_view("RUBYLIB"), std::string_view("GEM_HOME"), std::string_view("GEM_PATH"),
    std::string_view("BUNDLE_GEMFILE"),
    // Git runs GIT_SSH(_COMMAND), GIT_ASKPASS, GIT_PROXY_COMMAND,
    // GIT_EXTERNAL_DIFF, GIT_PAGER/GIT_EDITOR, its helpers from GIT_EXEC_PATH,
    // hooks from GIT_TEMPLATE_DIR, and a repository's hooks and config from
    // GIT_DIR. Not every GIT_*: GIT_TOKEN-like names are a server's secrets.
    std::string_view("GIT_SSH"), std::string_view("GIT_SSH_COMMAND"), std::string_view("GIT_ASKPASS"),
    std::string_view("GIT_PROXY_COMMAND"), std::string_view("GIT_EXTERNAL_DIFF"), std::string_view("GIT_PAGER"),
    std::string_view("GIT_EDITOR"), std::string_view("GIT_SEQUENCE_EDITOR"), std::string_view("GIT_EXEC_PATH"),
    std::string_view("GIT_TEMPLATE_DIR"), std::string_view("GIT_DIR"),
    // GIT_COMMON_DIR is a repository's shared part: its config, hooks (adv13).
    std::string_view("GIT_COMMON_DIR"),
    // Programs that many tools start by name: Python's webbrowser runs
    // $BROWSER, git and man run $EDITOR/$VISUAL/$PAGER/$MANPAGER, less runs
    // $LESSOPEN and $LESSCLOSE as preprocessors (adv13).
    std::string_view("BROWSER"), std::string_view("EDITOR"), std::string_view("VISUAL"), std::string_view("PAGER"),
    std::string_view("MANPAGER"), std::string_view("LESSOPEN"), std::string_view("LESSCLOSE"),
    std::string_view("SYSTEMD_PAGER"), std::string_view("GH_BROWSER"), std::string_view("GH_EDITOR"),
    std::string_view("SUDO_ASKPASS"), std::string_view("VIMINIT"), std::string_view("EXINIT"), std::string_view("PSQLRC"),
    // Configs that run commands or name the code a tool fetches (adv14): Go's
    // env file (GOFLAGS=-toolexec), module proxy and toolchain; kubectl's exec
    // credential plugins; the AWS CLI's credential_process; docker's
    // credential helpers; Rust's compiler wrapper, toolchain and cargo home;
    // Maven/Gradle options (-javaagent) and home; R, Tcl and Julia library
    // paths and profiles; RubyGems' Gemfile and bundler/gem configs.
    std::string_view("GOENV"), std::string_view("GOPROXY"), std::string_view("GOSUMDB"), std::string_view("GONOSUMDB"),
    std::string_view("GOTOOLCHAIN"), std::string_view("KUBECONFIG"), std::string_view("AWS_CONFIG_FILE"),
    std::string_view("DOCKER_CONFIG"), std::string_view("RUSTC_WRAPPER"), std::string_view("RUSTUP_TOOLCHAIN"),
    std::string_view("CARGO_HOME"), std::string_view("MAVEN_OPTS"), std::string_view("GRADLE_OPTS"),
    std::string_view("GRADLE_USER_HOME"), std::string_view("R_PROFILE_USER"), std::string_view("R_LIBS_USER"),
    std::string_view("TCLLIBPATH"), std::string_view("JULIA_LOAD_PATH"), std::string_view("RUBYGEMS_GEMDEPS"),
    std::string_view("BUNDLE_APP_CONFIG"), std::string_view("GEMRC"),
    // ssh runs SSH_ASKPASS (and git's askpass through it).
    std::string_view("SSH_ASKPASS"),
    // Java agents and classes: -javaagent in these options, CLASSPATH.
    std::string_view("JAVA_TOOL_OPTIONS"), std::string_view("_JAVA_OPTIONS"), std::string_view("JDK_JAVA_OPTIONS"),
    std::string_view("CLASSPATH"),
    // Lua runs LUA_INIT (code, or @FILE) and loads modules from LUA_PATH/LUA_CPATH.
    std::string_view("LUA_INIT"), std::string_view("LUA_PATH"), std::string_view("LUA_CPATH"),
    // PHP reads its ini (auto_prepend_file) from PHPRC and PHP_INI_SCAN_DIR.
    std::string_view("PHPRC"), std::string_view("PHP_INI_SCAN_DIR"),
    // OpenSSL loads engines/providers (shared objects) named in OPENSSL_CONF.
    std::string_view("OPENSSL_CONF"), std::string_view("OPENSSL_ENGINES"), std::string_view("OPENSSL_MODULES"),
    // Go's toolchain runs -toolexec and friends from GOFLAGS.
    std::string_view("GOFLAGS"),
};

// Names that choose where code and config are read from (ChoosesWhatRuns).
constexpr std::array kChoosers = {
    std::string_view("HOME"), std::string_view("PATH"), std::string_view("ZDOTDIR"), std::string_view("INPUTRC"),
    std::string_view("XDG_CONFIG_HOME"), std::string_view("XDG_CONFIG_DIRS"), std::string_view("XDG_DATA_HOME"),
    std::string_view("XDG_DATA_DIRS"), std::string_view("XDG_CACHE_HOME"), std::string_view("XDG_STATE_HOME"),
    // Programs found by a variable (a browser server's Chrome, Java); the
    // authorities TLS trusts are CaVariables().
    std::string_view("PUPPETEER_EXECUTABLE_PATH"), std::string_view("CHROME_PATH"), std::string_view("JAVA_HOME"),
};

constexpr CaVariable kCaVariables[] = {
    {.name = "NODE_EXTRA_CA_CERTS"}, {.name = "SSL_CERT_FILE"},  {.name = "REQUESTS_CA_BUNDLE"},
    {.name = "CURL_CA_BUNDLE"},      {.name = "SSL_CERT_DIR", .directory = true},
};

}  // namespace

std::span<const CaVariable> CaVariables() { return kCaVariables; }

bool ChoosesWhatRuns(std::string_view name) {
  return std::find(kChoosers.begin(), kChoosers.end(), name) != kChoosers.end() ||
         std::any_of(std::begin(kCaVariables), std::end(kCaVariables), [&](const CaVariable& v) { return v.name == name; });
}

bool PicksPackageIndex(std::string_view name) { return StartsWith(name, "PIP_") || StartsWith(name, "UV_"); }

bool IsNpmConfig(std::string_view name) { return StartsWithNoCase(name, "npm_config_"); }

bool InjectsCode(std::string_view name) {
  for (auto p : kPrefixes) {
    if (StartsWith(name, p)) return true;
  }
  // npm reads every npm_config_* (in any case) as its config: node-options
  // and script-shell run code, userconfig/globalconfig name a config file
  // that can set them.
  if (IsNpmConfig(name)) return true;
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

}  // namespace mcpcell
