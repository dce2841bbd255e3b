// cell/hidden_dirs.h: mcpcell's state directory (every cell's records,
// stderr copies and pins) is masked inside a grant above it, refused as a
// grant itself, and a bind above it without a mask is refused (fail closed).
#include "cell/hidden_dirs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "cell/spec_builder.h"
#include "temp_dir.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

// XDG_STATE_HOME pointed at `dir` for the test's life.
class StateHome {
 public:
  explicit StateHome(const std::string& dir) {
    if (const char* old = std::getenv("XDG_STATE_HOME")) old_ = old;
    ::setenv("XDG_STATE_HOME", dir.c_str(), 1);
  }
  ~StateHome() {
    if (old_) ::setenv("XDG_STATE_HOME", old_->c_str(), 1);
    else ::unsetenv("XDG_STATE_HOME");
  }

 private:
  std::optional<std::string> old_;
};

std::string Canonical(const testing::TempDir& d) { return fs::canonical(d.path()).string(); }

TEST(HiddenDirs, AGrantAboveTheStateDirectoryGetsItMaskedAndMadeWhenMissing) {
  testing::TempDir d("mcpcell-hidden");
  fs::create_directories(Canonical(d) + "/home");
  std::string base = Canonical(d) + "/home/.local/state";  // missing, as before the user's first run
  StateHome env(base);
  CellSpec spec;
  std::vector<std::string> notes;
  ASSERT_TRUE(AddUserBind(&spec, Canonical(d) + "/home:/h", false, false, "--read", &notes).ok());
  struct stat st{};
  ASSERT_EQ(::stat((base + "/mcpcell").c_str(), &st), 0) << "made before the cell starts";
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  bool masked = false;
  for (const auto& m : spec.mounts) masked = masked || (IsMask(m) && m.target == "/h/.local/state/mcpcell");
  EXPECT_TRUE(masked);
  EXPECT_TRUE(CheckHiddenDirsOutOfReach(spec).ok());
}

TEST(HiddenDirs, ForcedCredentialsStillMaskTheStateDirectory) {
  testing::TempDir d("mcpcell-hidden");
  StateHome env(Canonical(d) + "/state");
  CellSpec spec;
  std::vector<std::string> notes;
  ASSERT_TRUE(AddUserBind(&spec, Canonical(d), false, /*force=*/true, "--read", &notes).ok());
  EXPECT_TRUE(CheckHiddenDirsOutOfReach(spec).ok());
}

TEST(HiddenDirs, AGrantAtOrInsideTheStateDirectoryIsRefused) {
  testing::TempDir d("mcpcell-hidden");
  StateHome env(Canonical(d));
  fs::create_directories(Canonical(d) + "/mcpcell/logs");
  for (const char* grant : {"/mcpcell", "/mcpcell/logs"}) {
    CellSpec spec;
    std::vector<std::string> notes;
    Status added = AddUserBind(&spec, Canonical(d) + grant, false, false, "--read", &notes);
    if (added.ok()) added = CheckHiddenDirsOutOfReach(spec);
    ASSERT_FALSE(added.ok()) << grant;
    EXPECT_NE(added.error().Message().find("state directory"), std::string::npos) << added.error().Message();
  }
}

TEST(HiddenDirs, ABindAboveItWithoutAMaskIsRefused) {
  testing::TempDir d("mcpcell-hidden");
  StateHome env(Canonical(d) + "/s");
  fs::create_directories(Canonical(d) + "/s/mcpcell");
  CellSpec spec;
  MountSpec bind{MountSpec::Kind::kBind, Canonical(d), "/data", false, false, 0, "--read"};
  spec.mounts.push_back(bind);
  Status checked = CheckHiddenDirsOutOfReach(spec);
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.error().Message().find("/data/s/mcpcell"), std::string::npos) << checked.error().Message();
}

}  // namespace
}  // namespace mcpcell
