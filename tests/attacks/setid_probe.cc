// setid_probe: run in a cell with DIR granted --write; tries every route to a
// setuid/setgid file or a file capability in DIR (issue 14 item 5) and prints
// one JSON line per attempt: {"route":..., "refused":true|false, "errno":...}.
// "refused":false means the call succeeded — the test then also finds the bit
// on the host. Then the ordinary work a server does (a file, a directory),
// and how DIR's owner looks from inside. Self-contained (no mcpcell code).
//
// usage: setid_probe DIR

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

namespace {

std::string dir;

std::string P(const char* name) { return dir + "/" + name; }

void Report(const char* route, long rc, int err) {
  const char* name = rc == -1 ? strerrorname_np(err) : "";
  std::printf("{\"route\":\"%s\",\"refused\":%s,\"errno\":\"%s\"}\n", route, rc == -1 ? "true" : "false",
              name != nullptr ? name : "?");
  std::fflush(stdout);
}

void Try(const char* route, const std::function<long()>& call) {
  errno = 0;
  long rc = call();
  Report(route, rc, errno);
}

// Another ABI's entry (x32 bit, int 0x80) has other numbers and would miss
// every rule: the filter must kill the caller. Run in a child.
void TryInChild(const char* route, const std::function<long()>& call) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    long rc = call();
    _exit(rc == -1 ? 1 : 0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  bool refused = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const char* how = WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : refused ? "failed" : "";
  std::printf("{\"route\":\"%s\",\"refused\":%s,\"errno\":\"%s\"}\n", route, refused ? "true" : "false", how);
}

long I386Chmod(const char* path, long mode) {
#if defined(__x86_64__)
  long ret = 15;  // __NR_chmod on i386; the pointer must fit 32 bits to matter, the kill comes first
  asm volatile("int $0x80" : "+a"(ret) : "b"(path), "c"(mode) : "memory");
  return ret < 0 ? -1 : ret;
#else
  (void)path;
  (void)mode;
  return -1;
#endif
}

// A setuid file the host has (a read-only system bind in the cell).
std::string SetuidOnHost() {
  for (const char* p : {"/usr/bin/passwd", "/usr/bin/su", "/usr/bin/mount", "/usr/bin/chsh", "/usr/bin/newgrp"}) {
    struct stat st{};
    if (::stat(p, &st) == 0 && (st.st_mode & S_ISUID) != 0) return p;
  }
  return "/usr/bin/passwd";
}

void TryModes(const std::string& plain, int fd) {
  const char* f = plain.c_str();
  Try("chmod 4755", [&] { return chmod(f, 04755); });
  Try("chmod 2755", [&] { return chmod(f, 02755); });
  Try("chmod 4755 with high bits", [&] { return syscall(SYS_chmod, f, (1UL << 32) | 0x10000 | 04755); });
  Try("fchmod 4755", [&] { return fchmod(fd, 04755); });
  Try("fchmodat 6755", [&] { return fchmodat(AT_FDCWD, f, 06755, 0); });
  Try("fchmodat2 4755", [&] { return syscall(452, AT_FDCWD, f, 04755, 0); });
  Try("chmod via /proc/self/fd 4755", [&] { return chmod(("/proc/self/fd/" + std::to_string(fd)).c_str(), 04755); });
  TryInChild("x32 chmod 4755", [&] { return syscall(0x40000000L | SYS_chmod, f, 04755); });
  TryInChild("i386 chmod 4755", [&] { return I386Chmod(f, 04755); });
}

void TryCreates() {
  Try("open O_CREAT 4755", [] { return syscall(SYS_open, P("open4755").c_str(), O_CREAT | O_WRONLY, 04755); });
  Try("openat O_CREAT 2755", [] { return openat(AT_FDCWD, P("openat2755").c_str(), O_CREAT | O_WRONLY, 02755); });
  Try("creat 6755", [] { return creat(P("creat6755").c_str(), 06755); });
  Try("O_TMPFILE 4755 + linkat", [] {
    int t = openat(AT_FDCWD, dir.c_str(), O_TMPFILE | O_WRONLY, 04755);
    if (t < 0) return -1L;
    return static_cast<long>(linkat(AT_FDCWD, ("/proc/self/fd/" + std::to_string(t)).c_str(), AT_FDCWD,
                                    P("tmpfile4755").c_str(), AT_SYMLINK_FOLLOW));
  });
  Try("mkdir 2755", [] { return mkdir(P("mkdir2755").c_str(), 02755); });
  Try("mkdirat 4755", [] { return mkdirat(AT_FDCWD, P("mkdirat4755").c_str(), 04755); });
  Try("mknod S_IFREG 4755", [] { return mknod(P("mknod4755").c_str(), S_IFREG | 04755, 0); });
  Try("mknodat S_IFREG 2755", [] { return mknodat(AT_FDCWD, P("mknodat2755").c_str(), S_IFREG | 02755, 0); });
  Try("openat2 O_CREAT 4755", [] {
    struct open_how how{};
    how.flags = O_CREAT | O_WRONLY;
    how.mode = 04755;
    return syscall(SYS_openat2, AT_FDCWD, P("openat2_4755").c_str(), &how, sizeof how);
  });
}

void TryCapsAndLinks(const std::string& plain, int fd) {
  // VFS_CAP_REVISION_2 with cap_setuid permitted+effective: what a real
  // `setcap cap_setuid+ep` writes.
  const unsigned char cap[20] = {0x01, 0x00, 0x00, 0x02, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  Try("setxattr security.capability", [&] { return setxattr(plain.c_str(), "security.capability", cap, sizeof cap, 0); });
  Try("fsetxattr security.capability", [&] { return fsetxattr(fd, "security.capability", cap, sizeof cap, 0); });
  Try("setxattrat security.capability", [&] {
    return syscall(463, AT_FDCWD, plain.c_str(), 0, "security.capability", nullptr, 0);
  });
  // Never a rename (or anything else that changes the host's file): run
  // outside a cell by root, a rename would move /usr/bin/passwd away. A link
  // only adds a name, in DIR; the bare control skips even that.
  if (std::getenv("SETID_PROBE_NO_HOST") != nullptr) return;
  std::string host_suid = SetuidOnHost();
  Try("link a setuid file of the host", [&] { return link(host_suid.c_str(), P("linked-suid").c_str()); });
}

// What a server does every day must still work, as the directory's owner.
void OrdinaryWork() {
  int fd = open(P("ordinary.txt").c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  bool ok = fd >= 0 && write(fd, "ok\n", 3) == 3;
  if (fd >= 0) close(fd);
  ok = ok && mkdir(P("ordinary-dir").c_str(), 0755) == 0 && chmod(P("ordinary.txt").c_str(), 0755) == 0;
  struct stat st{};
  ::stat(dir.c_str(), &st);
  std::printf("{\"ordinary_work\":%s,\"dir_uid_inside\":%u,\"my_uid\":%u}\n", ok ? "true" : "false", st.st_uid,
              getuid());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: setid_probe DIR\n");
    return 2;
  }
  dir = argv[1];
  std::string plain = P("plain");
  int fd = open(plain.c_str(), O_CREAT | O_RDWR, 0755);
  if (fd < 0) {
    std::printf("{\"error\":\"create %s: %s\"}\n", plain.c_str(), strerror(errno));
    return 1;
  }
  TryModes(plain, fd);
  TryCreates();
  TryCapsAndLinks(plain, fd);
  OrdinaryWork();
  return 0;
}
