// cell/launch_prefetch.h: the prefetch thread is joined once, whichever call
// comes first. An install-script cell clones (AwaitLaunchPrefetch) without
// taking the prefetched program (it compiles its own); the server's cell
// then took it and joined the thread again: std::system_error, SIGABRT.
// And root's id facts: the drawn first candidate is handed out once.

#include "cell/launch_prefetch.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace mcpcell {
namespace {

TEST(LaunchPrefetch, TheProgramIsTakenAfterTheThreadWasAwaited) {
  StartLaunchPrefetch();
  AwaitLaunchPrefetch();  // a script cell's clone
  auto program = PrefetchedSeccomp();  // the server's cell
  EXPECT_TRUE(program.ok()) << program.error().Message();
  AwaitLaunchPrefetch();
  EXPECT_TRUE(PrefetchedSeccomp().ok());
}

// The claim's first candidate, drawn and asked about on the thread, serves
// the first claim only: a later cell of the run draws its own start.
TEST(LaunchPrefetch, TheDrawnStartServesOneClaim) {
  if (::geteuid() != 0) GTEST_SKIP() << "the thread reads host id facts for root only";
  StartLaunchPrefetch();
  IdFacts first = PrefetchedHostIdFacts();
  EXPECT_TRUE(first.first_offset.has_value());
  EXPECT_FALSE(PrefetchedHostIdFacts().first_offset.has_value());
  AwaitLaunchPrefetch();
}

}  // namespace
}  // namespace mcpcell
