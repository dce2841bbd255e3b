#include "guard/secret_check.h"

#include "guard/secret_scanner.h"

namespace mcpcell {

bool HoldsBuiltinSecret(std::string_view text) {
  auto scanner = SecretScanner::Builtin();
  if (!scanner.ok()) return true;
  auto scratch = (*scanner)->NewScratch();
  if (!scratch.ok()) return true;
  return !(*scanner)->Scan(text, scratch->get()).empty();
}

}  // namespace mcpcell
