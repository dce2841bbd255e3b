// The libraries mcpcell loads at their first use (util/lazy_library.h): a
// missing one is an error that names it and its package; a present one
// resolves its symbols, and a forwarder calls the real function.
#include <gtest/gtest.h>

#include <hs/hs.h>

#include <string>

#include "audit/sha256.h"
#include "util/lazy_library.h"

namespace mcpcell {
namespace {

TEST(LazyLibrary, AMissingLibraryIsAnErrorNamingItAndItsPackage) {
  LazyLibrary lib("libmcpcell-no-such-library.so.7", "mcpcell-no-such-package");
  Status s = lib.Load();
  ASSERT_FALSE(s.ok());
  std::string m = s.error().Message();
  EXPECT_NE(m.find("libmcpcell-no-such-library.so.7"), std::string::npos) << m;
  EXPECT_NE(m.find("mcpcell-no-such-package"), std::string::npos) << m;
}

TEST(LazyLibrary, AMissingSymbolEndsTheProcessWithItsName) {
  EXPECT_DEATH(LazyHs().Symbol("hs_mcpcell_no_such_function"), "has no hs_mcpcell_no_such_function");
}

TEST(LazyLibrary, TheRealLibrariesLoadAndForwardersReachThem) {
  for (const LazyLibrary* lib : {&LazyNftables(), &LazyLdns(), &LazyHs(), &LazyNettle(), &LazyYaml()}) {
    EXPECT_TRUE(lib->Load().ok()) << lib->Load().error().Message();
  }
  // hs_version through the forwarder is the library's own string.
  using Version = const char* (*)();
  auto real = reinterpret_cast<Version>(LazyHs().Symbol("hs_version"));
  EXPECT_STREQ(hs_version(), real());
  // SHA-256 through the libnettle forwarders: FIPS 180-2's "abc" vector.
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace mcpcell
