// adv_idmap_probe: small steps an adversary takes in a cell against an
// idmapped --write grant (issue 14 item 5), one per invocation, so the e2e
// test (adv_idmap.test.mjs) can check the host afterwards.
//
//   adv_idmap_probe mmap-then-exec FILE   rewrite FILE through a shared mmap
//                                         (keeps security.capability), then chmod 0755
//   adv_idmap_probe mmap-copy-then-exec SRC FILE   the same with SRC's bytes
//   adv_idmap_probe chown FILE UID GID    chown to other ids (prints rc/errno)
//   adv_idmap_probe misc DIR              io_uring, device nodes, fchmodat2 on a
//                                         link, a setgid file in a setgid dir
//
// Prints one JSON line: {"step":..., "rc":..., "errno":...}. Self-contained.

#include <fcntl.h>
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void Report(const char* step, int rc, int err) {
  const char* name = rc == -1 ? strerrorname_np(err) : "";
  std::printf("{\"step\":\"%s\",\"rc\":%d,\"errno\":\"%s\"}\n", step, rc, name != nullptr ? name : "?");
  std::fflush(stdout);
}

// The payload replaces the start of the file; a write(2) would drop the
// capability (file_remove_privs), a store through MAP_SHARED does not.
int MmapThenExec(const char* file, const std::string& payload_text) {
  const std::string& kPayloadStr = payload_text;
  int fd = open(file, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    Report("open O_RDWR", -1, errno);
    return 0;
  }
  struct stat st{};
  fstat(fd, &st);
  const char* kPayload = kPayloadStr.data();
  const size_t kLen = kPayloadStr.size();
  if (static_cast<size_t>(st.st_size) < kLen) {
    Report("file too small for the payload", -1, EINVAL);
    return 0;
  }
  void* p = mmap(nullptr, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    Report("mmap shared", -1, errno);
    return 0;
  }
  std::memcpy(p, kPayload, kLen);
  std::memset(static_cast<char*>(p) + kLen, 0, st.st_size - kLen);
  int rc = msync(p, st.st_size, MS_SYNC);
  Report("mmap write", rc, errno);
  munmap(p, st.st_size);
  rc = fchmod(fd, 0755);
  Report("chmod 0755", rc, errno);
  close(fd);
  return 0;
}

// Routes the setid_probe of the idmap branch does not try.
int Misc(const std::string& dir) {
  struct io_uring_params params{};
  long ring = syscall(SYS_io_uring_setup, 4, &params);
  Report("io_uring_setup (IORING_OP_OPENAT would carry a mode)", ring < 0 ? -1 : 0, errno);
  int rc = mknod((dir + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3));
  Report("mknod char 1:3", rc, errno);
  rc = mknod((dir + "/sda").c_str(), S_IFBLK | 0600, makedev(8, 0));
  Report("mknod block 8:0", rc, errno);
  int fd = open((dir + "/target").c_str(), O_CREAT | O_WRONLY, 0755);
  if (fd >= 0) close(fd);
  if (symlink("target", (dir + "/link").c_str()) != 0) Report("symlink", -1, errno);
  rc = static_cast<int>(syscall(452, AT_FDCWD, (dir + "/link").c_str(), 04755, AT_SYMLINK_NOFOLLOW));
  Report("fchmodat2 4755 AT_SYMLINK_NOFOLLOW", rc, errno);
  rc = static_cast<int>(syscall(452, fd = open((dir + "/target").c_str(), O_PATH), "", 02755, AT_EMPTY_PATH));
  Report("fchmodat2 2755 AT_EMPTY_PATH on O_PATH", rc, errno);
  // umask cannot add bits; a setgid parent gives directories S_ISGID (harmless
  // on a directory) but never a file.
  mkdir((dir + "/sgid-dir").c_str(), 0755);
  fd = open((dir + "/sgid-dir/f").c_str(), O_CREAT | O_WRONLY, 0755);
  Report("create in a dir", fd < 0 ? -1 : 0, errno);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "mmap-then-exec" && argc == 3) return MmapThenExec(argv[2], "#!/bin/sh\necho planted-by-the-cell\n");
  if (cmd == "mmap-copy-then-exec" && argc == 4) {
    // The payload is a real program (e.g. /usr/bin/cat): the capability then
    // counts when a host user runs the file.
    FILE* in = std::fopen(argv[2], "rb");
    std::string bytes;
    for (int c; in != nullptr && (c = std::fgetc(in)) != EOF;) bytes += static_cast<char>(c);
    if (in != nullptr) std::fclose(in);
    return MmapThenExec(argv[3], bytes);
  }
  if (cmd == "chown" && argc == 5) {
    int rc = chown(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
    Report("chown", rc, errno);
    rc = lchown(argv[2], std::atoi(argv[3]), -1);
    Report("lchown uid", rc, errno);
    rc = chown(argv[2], -1, std::atoi(argv[4]));
    Report("chown gid", rc, errno);
    return 0;
  }
  if (cmd == "misc" && argc == 3) return Misc(argv[2]);
  std::fprintf(stderr, "usage: adv_idmap_probe mmap-then-exec FILE | chown FILE UID GID\n");
  return 2;
}
