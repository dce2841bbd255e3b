#include "util/diag.h"

#include <unistd.h>

#include <string>

#include "util/write_all.h"

namespace mcpcell {
namespace {

void Emit(std::string_view prefix, std::string_view line) {
  std::string out;
  out.reserve(prefix.size() + line.size() + 1);
  out.append(prefix).append(line).push_back('\n');
  // Nothing to do when stderr is gone: there is nowhere left to say it.
  (void)WriteAll(STDERR_FILENO, out, "write to stderr");
}

}  // namespace

void Say(std::string_view line) { Emit("mcpcell: ", line); }

void Warn(std::string_view line) { Emit("mcpcell: warning: ", line); }

void ShowText(std::string_view text) { (void)WriteAll(STDERR_FILENO, text, "write to stderr"); }

void SayAs(std::string_view subcommand, std::string_view line) {
  Emit("mcpcell " + std::string(subcommand) + ": ", line);
}

}  // namespace mcpcell
