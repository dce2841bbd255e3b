// adv_idmap_probe: small steps an adversary takes in a cell against an
// idmapped --write grant (issue 14 item 5), one per invocation, so the e2e
// test (adv_idmap.test.mjs) can check the host afterwards.
//
//   adv_idmap_probe mmap-then-exec FILE   rewrite FILE through a shared mmap
//                                         (keeps security.capability), then chmod 0755
//   adv_idmap_probe chown FILE UID GID    chown to other ids (prints rc/errno)
//
// Prints one JSON line: {"step":..., "rc":..., "errno":...}. Self-contained.

#include <fcntl.h>
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
int MmapThenExec(const char* file) {
  static const char kPayload[] = "#!/bin/sh\necho planted-by-the-cell\n";
  int fd = open(file, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    Report("open O_RDWR", -1, errno);
    return 0;
  }
  struct stat st{};
  fstat(fd, &st);
  if (static_cast<size_t>(st.st_size) < sizeof kPayload) {
    Report("file too small for the payload", -1, EINVAL);
    return 0;
  }
  void* p = mmap(nullptr, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    Report("mmap shared", -1, errno);
    return 0;
  }
  std::memcpy(p, kPayload, sizeof kPayload - 1);
  std::memset(static_cast<char*>(p) + sizeof kPayload - 1, '\n', st.st_size - (sizeof kPayload - 1));
  int rc = msync(p, st.st_size, MS_SYNC);
  Report("mmap write", rc, errno);
  munmap(p, st.st_size);
  rc = fchmod(fd, 0755);
  Report("chmod 0755", rc, errno);
  close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "mmap-then-exec" && argc == 3) return MmapThenExec(argv[2]);
  if (cmd == "chown" && argc == 5) {
    int rc = chown(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
    Report("chown", rc, errno);
    rc = lchown(argv[2], std::atoi(argv[3]), -1);
    Report("lchown uid", rc, errno);
    rc = chown(argv[2], -1, std::atoi(argv[4]));
    Report("chown gid", rc, errno);
    return 0;
  }
  std::fprintf(stderr, "usage: adv_idmap_probe mmap-then-exec FILE | chown FILE UID GID\n");
  return 2;
}
