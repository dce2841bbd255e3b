// One PATH lookup (util/path_search.h): the file the policy judges
// (TrustFacts.local_path) is the file execvp(3) runs, for every PATH shape
// where the three former lookups disagreed — an empty entry, "./", a relative
// entry — and a directory or non-executable file named like the program is
// passed over, as execvp passes over execve's EACCES.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "policy/trust_facts.h"
#include "util/path_search.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

class PathSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/path-search-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = fs::canonical(tmpl).string();
    fs::create_directories(root_ + "/cwd/bin");
    fs::create_directories(root_ + "/abs");
    fs::create_directories(root_ + "/decoys/tool");  // a directory named like the program
    Program(root_ + "/abs/tool");
    old_cwd_ = fs::current_path();
    fs::current_path(root_ + "/cwd");
    const char* path = std::getenv("PATH");
    old_path_ = path != nullptr ? path : "";
  }
  void TearDown() override {
    ::setenv("PATH", old_path_.c_str(), 1);
    fs::current_path(old_cwd_);
    fs::remove_all(root_);
  }

  // A shell script that prints its own host path: which file ran.
  static void Program(const std::string& path, mode_t mode = 0755) {
    std::ofstream(path) << "#!/bin/sh\necho " << path << "\n";
    ::chmod(path.c_str(), mode);
  }

  // What glibc's execvp("tool") runs with the current PATH and cwd ("" if none).
  static std::string ExecvpRuns() {
    int fds[2];
    if (::pipe(fds) != 0) return "pipe failed";
    pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      char* argv[] = {const_cast<char*>("tool"), nullptr};  // NOLINT: execvp's signature
      ::execvp("tool", argv);
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string out;
    char buf[512];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  // What the policy is shown for `mcpcell run -- tool`.
  static std::string PolicyJudges() {
    auto ref = ParseServerRef(std::nullopt, {"tool"});
    if (!ref) return "parse failed: " + ref.error().Message();
    return GatherTrustFacts(*ref, nullptr).local_path;
  }

  void ExpectSameFile(const std::string& path_value, const std::string& want) {
    ::setenv("PATH", path_value.c_str(), 1);
    SCOPED_TRACE("PATH=" + path_value);
    EXPECT_EQ(PolicyJudges(), want);
    EXPECT_EQ(FindOnHostPath("tool"), want);
    EXPECT_EQ(ExecvpRuns(), want);
    // The cell's PID 1 searches the same way (relative to its cwd).
    std::string spelled = SearchPath("tool", path_value);
    EXPECT_EQ(spelled.empty() ? "" : fs::absolute(spelled).lexically_normal().string(), want);
  }

  std::string root_;
  fs::path old_cwd_;
  std::string old_path_;
};

TEST_F(PathSearch, EmptyEntryIsTheCurrentDirectory) {
  Program(root_ + "/cwd/tool");
  ExpectSameFile(":" + root_ + "/abs", root_ + "/cwd/tool");
  ExpectSameFile(root_ + "/decoys:" + ":" + root_ + "/abs", root_ + "/cwd/tool");  // "a::b"
  ExpectSameFile(root_ + "/decoys:", root_ + "/cwd/tool");                        // trailing ":"
}

TEST_F(PathSearch, DotSlashEntry) {
  Program(root_ + "/cwd/tool");
  ExpectSameFile("./:" + root_ + "/abs", root_ + "/cwd/tool");
  ExpectSameFile(".:" + root_ + "/abs", root_ + "/cwd/tool");
}

TEST_F(PathSearch, RelativeEntryIsRelativeToTheCurrentDirectory) {
  Program(root_ + "/cwd/bin/tool");
  ExpectSameFile("bin:" + root_ + "/abs", root_ + "/cwd/bin/tool");
}

TEST_F(PathSearch, DirectoriesAndNonExecutablesArePassedOver) {
  Program(root_ + "/cwd/tool", 0644);  // not executable: execve says EACCES, execvp goes on
  ExpectSameFile(root_ + "/decoys::" + root_ + "/abs", root_ + "/abs/tool");
}

TEST_F(PathSearch, NothingFound) {
  ExpectSameFile(root_ + "/decoys", "");
  EXPECT_EQ(SearchPath("", root_ + "/abs"), "");
}

// A plain run's node (cli/launch_plan.cc NameThePlainNode, adv13): only the
// absolute entries count, so the cwd never chooses it.
TEST_F(PathSearch, TheAbsoluteSearchSkipsEmptyDotAndRelativeEntries) {
  Program(root_ + "/cwd/tool");
  Program(root_ + "/cwd/bin/tool");
  Program(root_ + "/abs/tool");
  for (std::string value : {":" + root_ + "/abs", ".:" + root_ + "/abs", "bin:" + root_ + "/abs",
                            root_ + "/decoys::" + root_ + "/abs:"}) {
    ::setenv("PATH", value.c_str(), 1);
    EXPECT_EQ(FindOnAbsoluteHostPath("tool"), root_ + "/abs/tool") << value;
  }
  ::setenv("PATH", "bin:.", 1);
  EXPECT_EQ(FindOnAbsoluteHostPath("tool"), "");
}

// What a run without a cell may start as an interpreter (adv14): the
// system's, not a file of root's own elsewhere (this test's, as root).
TEST_F(PathSearch, ASystemProgramIsRootsUnderTheSystemDirectories) {
  EXPECT_TRUE(IsSystemProgram("/bin/sh"));
  Program(root_ + "/abs/tool");
  EXPECT_FALSE(IsSystemProgram(root_ + "/abs/tool"));
  EXPECT_FALSE(IsSystemProgram(root_ + "/abs/missing"));
}

TEST_F(PathSearch, NameWithSlashIsNotSearched) {
  Program(root_ + "/cwd/bin/tool");
  EXPECT_EQ(SearchPath("bin/tool", root_ + "/abs"), "bin/tool");
  EXPECT_EQ(SearchPath("bin/missing", root_ + "/cwd/bin"), "");
  EXPECT_EQ(FindOnHostPath("./bin/tool"), root_ + "/cwd/bin/tool");
}

}  // namespace
}  // namespace mcpcell
