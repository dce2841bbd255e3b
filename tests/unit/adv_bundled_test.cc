// Adversary pass adv4 on the install-script cells' handling of bundled
// packages (commit 8d682f2): FindScriptPackages / RunPackageScripts on
// trees a tarball can carry.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "source/install_scripts.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

// A tarball may carry any number of directories below its node_modules
// (bundled, or — when the registry's manifest names no bundle — left on
// disk unknown to npm). Each with an install script and a dependency on the
// next: FindScriptPackages orders them by a recursive depth-first walk
// (Visit), one stack frame per link of the chain. adv4 finding: a long chain
// overflows the stack and mcpcell dies of SIGSEGV mid-install (8 MB stack,
// RelWithDebInfo: 60000 links pass, 150000 crash). Off by default (it makes
// the directories): ADV4_CHAIN=150000, or ADV4_TREE=<node_modules> with
// ADV4_CHAIN=<n> for a tree made beforehand, e.g.
//   python3 -c "import os,json
//   for i in range(150000):
//     p=f'/tmp/t/node_modules/p{i}'; os.makedirs(p)
//     open(p+'/package.json','w').write(json.dumps({'scripts':{'install':'x'},'dependencies':{f'p{i+1}':'*'}}))"
// A tarball can ship such a tree in its own node_modules: npm keeps what
// it does not know of on disk (adv4 e2e: the versionless folder).
TEST(AdvBundled, LongDependencyChainDoesNotCrashTheOrdering) {
  const char* n_env = ::getenv("ADV4_CHAIN");
  const int n = n_env != nullptr ? ::atoi(n_env) : 0;
  if (n == 0) GTEST_SKIP() << "set ADV4_CHAIN=<n> (the finding needs ~200000; it makes that many directories)";
  char tmpl[] = "/tmp/adv4-chain-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string nm = std::string(tmpl) + "/node_modules";
  const char* tree = ::getenv("ADV4_TREE");  // an existing tree of n such packages
  if (tree != nullptr) nm = tree;
  for (int i = 0; tree == nullptr && i < n; ++i) {
    std::string dir = nm + "/p" + std::to_string(i);
    fs::create_directories(dir);
    std::ofstream(dir + "/package.json") << "{\"scripts\":{\"install\":\"x\"},\"dependencies\":{\"p" << (i + 1)
                                         << "\":\"*\"}}";
  }
  EXPECT_EXIT(
      {
        auto found = FindScriptPackages(nm);
        ::_exit(found.size() == static_cast<std::size_t>(n) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  fs::remove_all(tmpl);
}

}  // namespace
}  // namespace mcpcell
