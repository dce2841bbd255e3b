// The programs generated at build time against what a launch would compile
// (issue 15): byte for byte, for every variant, so the two cannot drift; and
// any difference in the key sends a launch back to compiling.

#include "cell/native/seccomp_prebuilt.h"

#include <gtest/gtest.h>

#include <cstring>

namespace mcpcell {
namespace {

bool SameBytes(const SeccompProgram& a, std::span<const sock_filter> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(sock_filter)) == 0;
}

TEST(SeccompPrebuilt, EveryVariantIsTheRuntimeCompileByteForByte) {
  for (SeccompVariant variant : kSeccompVariants) {
    SCOPED_TRACE(SeccompVariantName(variant));
    auto rules = SeccompRules(variant);
    auto compiled = CompileSeccomp(rules);
    ASSERT_TRUE(compiled.ok()) << compiled.error().Message();
    // Built and tested on one machine: the key must match here.
    const auto* entry = MatchPrebuiltSeccomp(PrebuiltSeccompTable(), variant, SeccompKeyFor(rules));
    ASSERT_NE(entry, nullptr) << "no prebuilt program for this machine's key";
    EXPECT_TRUE(SameBytes(*compiled, entry->program));
    auto used = SeccompProgramFor(variant);
    ASSERT_TRUE(used.ok());
    EXPECT_TRUE(SameBytes(*compiled, *used));
  }
}

TEST(SeccompPrebuilt, VariantsDiffer) {
  auto deny = SeccompProgramFor(SeccompVariant::kDeny);
  auto prealloc = SeccompProgramFor(SeccompVariant::kDenyAndPreallocation);
  ASSERT_TRUE(deny.ok() && prealloc.ok());
  EXPECT_NE(deny->size(), prealloc->size());
}

TEST(SeccompPrebuilt, KeyHasTheLibraryAndTheRules) {
  auto rules = SeccompRules(SeccompVariant::kDeny);
  SeccompCompileKey key = SeccompKeyFor(rules);
  EXPECT_FALSE(key.library_build_id.empty());
  EXPECT_GT(key.api_level, 0);
  EXPECT_NE(key.arch, 0u);
  EXPECT_EQ(key.inputs, SeccompCompileInputs(rules));
  // The reason text is no input; an errno is.
  auto changed = rules;
  changed[0].why = "another reason";
  EXPECT_EQ(SeccompCompileInputs(changed), key.inputs);
  changed[0].errno_value = EACCES;
  EXPECT_NE(SeccompCompileInputs(changed), key.inputs);
}

// A table whose one entry is a decoy program ("allow everything") under a
// key that is this machine's but for one field: the launch must compile.
struct Decoy {
  std::vector<std::uint64_t> inputs;
  std::string build_id;
  PrebuiltSeccomp entry{};
};

const sock_filter kAllowAll[] = {{0x06, 0, 0, 0x7fff0000}};

Decoy DecoyFor(SeccompVariant variant) {
  SeccompCompileKey key = SeccompKeyFor(SeccompRules(variant));
  Decoy d{key.inputs, key.library_build_id, {}};
  d.entry = PrebuiltSeccomp{variant, key.arch, {key.version[0], key.version[1], key.version[2]},
                            nullptr, key.api_level, {}, kAllowAll};
  return d;
}

void ExpectCompiled(const PrebuiltSeccomp& entry, SeccompVariant variant) {
  auto compiled = CompileSeccomp(SeccompRules(variant));
  auto used = SeccompProgramFrom(std::span(&entry, 1), variant);
  ASSERT_TRUE(compiled.ok() && used.ok());
  EXPECT_TRUE(SameBytes(*compiled, *used)) << "the decoy was used";
}

TEST(SeccompPrebuilt, AnyMismatchFallsBackToCompiling) {
  const auto v = SeccompVariant::kDeny;
  Decoy d = DecoyFor(v);
  auto fix = [&d] {
    d.entry.inputs = d.inputs;
    d.entry.library_build_id = d.build_id.c_str();
  };
  fix();
  // The decoy with the exact key is taken (so each case below is a real test).
  auto taken = SeccompProgramFrom(std::span(&d.entry, 1), v);
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(taken->size(), 1u);

  PrebuiltSeccomp e = d.entry;
  e.arch ^= 1;
  ExpectCompiled(e, v);
  e = d.entry;
  e.version[2] += 1;
  ExpectCompiled(e, v);
  e = d.entry;
  e.api_level -= 1;
  ExpectCompiled(e, v);
  e = d.entry;
  std::string other_id = d.build_id;
  other_id[0] = other_id[0] == '0' ? '1' : '0';
  e.library_build_id = other_id.c_str();
  ExpectCompiled(e, v);
  e.library_build_id = nullptr;
  ExpectCompiled(e, v);
  e = d.entry;
  e.variant = SeccompVariant::kDenyAndPreallocation;
  ExpectCompiled(e, v);
  auto inputs = d.inputs;
  inputs[0] += 1;  // another syscall number for the first rule
  e = d.entry;
  e.inputs = inputs;
  ExpectCompiled(e, v);
  inputs = d.inputs;
  inputs.pop_back();
  e.inputs = inputs;
  ExpectCompiled(e, v);
}

TEST(SeccompPrebuilt, UnknownLibraryNeverMatches) {
  Decoy d = DecoyFor(SeccompVariant::kDeny);
  d.entry.inputs = d.inputs;
  d.entry.library_build_id = "";
  SeccompCompileKey key = SeccompKeyFor(SeccompRules(SeccompVariant::kDeny));
  key.library_build_id.clear();
  EXPECT_EQ(MatchPrebuiltSeccomp(std::span(&d.entry, 1), SeccompVariant::kDeny, key), nullptr);
}

}  // namespace
}  // namespace mcpcell
