// Every `run` option either holds without a cell or is refused when a policy
// `allow` runs the server plainly (adv8: flags only a cell enforces were
// accepted and ignored). A new option must be put on one side, here or in
// CellOnlyFlags (src/cli/launch_plan.cc), before this test passes.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/launch_plan.h"
#include "core/run_request.h"

namespace mcpcell {
namespace {

// What holds for a server run without a cell, and why.
const std::set<std::string> kHoldWithoutACell = {
    "--help",         // CLI11's own
    "--isolate",      // turns the policy's allow into a cell
    "--policy",       // the rule that allows it
    "--audit-log",    // the launch record is written for plain runs too
    "--env",          // RunPlainly passes the spec's environment
    "--drop-env",     // silences the note about a dropped variable
    "--install-timeout", "--install-scripts",  // the install runs before either kind of run
    "--npm-scope",    // the same (an allow run refuses it: launch_plan.cc WhySourceIsSwappable)
    "--dry-run", "--verbose",
};

TEST(RunOptions, EveryOptionIsCellOnlyOrHoldsWithoutACell) {
  CLI::App app;
  RunRequest req;
  AddRunOptions(&app, &req, RunOptionSet::kRun, CommandTail{});
  std::set<std::string> cell_only;
  for (const auto& f : CellOnlyFlags()) cell_only.insert(std::string(f.flag));
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_positional()) continue;
    std::string name = opt->get_name();
    EXPECT_TRUE(cell_only.count(name) + kHoldWithoutACell.count(name) == 1)
        << name << " is on neither side (or both): add it to CellOnlyFlags if only a cell or the relay "
                   "enforces it, else to kHoldWithoutACell with the reason it holds without one";
  }
  for (const auto& f : cell_only) {
    EXPECT_NE(app.get_option_no_throw(f), nullptr) << f << " is in CellOnlyFlags but is no run option";
  }
}

}  // namespace
}  // namespace mcpcell
