// cell/launch_prefetch.h: the prefetch thread is joined once, whichever call
// comes first. An install-script cell clones (AwaitLaunchPrefetch) without
// taking the prefetched program (it compiles its own); the server's cell
// then took it and joined the thread again: std::system_error, SIGABRT.

#include "cell/launch_prefetch.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace mcpcell
