// `mcpcell audit verify FILE`: checks an audit log's hash chain. Prints
// "ok: N records, R runs, chain intact" (exit 0) or "FILE:LINE: problem"
// for the first broken record (exit 1); exit 2 when the file cannot be read.

#include <cstdio>
#include <fstream>
#include <string>

#include <CLI/CLI.hpp>

#include "audit/audit_verify.h"
#include "cli/commands.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

int Verify(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    SayAs("audit verify", path + ": cannot open");
    return 2;
  }
  ChainReport r = VerifyChain(in);
  if (!r.ok) {
    std::printf("%s:%llu: %s\n", path.c_str(), static_cast<unsigned long long>(r.line), r.problem.c_str());
    return 1;
  }
  std::printf("ok: %llu records, %llu runs, chain intact\n", static_cast<unsigned long long>(r.records),
              static_cast<unsigned long long>(r.runs));
  return 0;
}

}  // namespace

void AddAuditCommand(CLI::App& app, int* exit_code) {
  auto* audit = app.add_subcommand("audit", "Work with audit logs");
  audit->require_subcommand(1);
  auto* verify = audit->add_subcommand("verify", "Check an audit log's hash chain; report the first broken record");
  auto path = std::make_shared<std::string>();
  verify->add_option("file", *path, "the audit log (--audit-log FILE of mcpcell run)")->required();
  verify->callback([exit_code, path] { *exit_code = Verify(*path); });
}

}  // namespace mcpcell
