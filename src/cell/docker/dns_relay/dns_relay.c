// mcpcell-dns-relay: the in-container half of a container cell's DNS
// reports under profile none (issue 14 item 8; host half: dns_report.h).
// Static (no libc of the image's needed), bound read-only into the container
// at /run/mcpcell-dns/relay. It answers nothing itself and reaches nothing:
// it moves datagrams between the container's 127.0.0.53:53 and its own stdio,
// which is an Engine API exec stream to mcpcell, where the DNS stub answers.
//
//   relay hold -- CMD ARGS...   the server's wrapper: binds UDP 127.0.0.53:53
//       (before the server runs, so no lookup can come too early), leaves a
//       detached holder that hands that socket (SCM_RIGHTS) to the first
//       process connecting to the abstract unix socket @mcpcell-dns-relay,
//       then execs CMD. Binding may fail (port 53 is privileged where the
//       engine did not lower net.ipv4.ip_unprivileged_port_start): the
//       server then runs as it would have, without reports.
//   relay serve                  exec'd by mcpcell: takes the socket from the
//       holder and relays. stdout frames: 8-byte header (u16 length, u16
//       client port, u32 client IPv4, all big-endian), then the datagram.
//       stdin frames, the same format, are sent back to the client, which
//       must be on 127.0.0.0/8 (the container's own loopback).
//
// Anything in the container (the server runs as the same uid) may connect
// to the holder first or write such frames: it then only sends mcpcell
// queries it could send to 127.0.0.53 itself.

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char kAbstractName[] = "mcpcell-dns-relay";
enum { kHeader = 8, kMaxDatagram = 65535 };

static socklen_t AbstractAddress(struct sockaddr_un* a) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  memcpy(a->sun_path + 1, kAbstractName, sizeof kAbstractName - 1);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + sizeof kAbstractName - 1);
}

static void Note(const char* what) { dprintf(2, "mcpcell dns relay: %s: %s\n", what, strerror(errno)); }

// The holder: no stdio of the server's (its FIFOs would stay open), hands
// the socket over once and exits.
static void Hold(int udp, int listener) {
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3; ++fd) {
    if (null >= 0) dup2(null, fd);
  }
  int peer = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
  if (peer < 0) _exit(1);
  char byte = 'd';
  struct iovec iov = {&byte, 1};
  union {
    struct cmsghdr h;
    char space[CMSG_SPACE(sizeof(int))];
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr msg = {0};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.space;
  msg.msg_controllen = sizeof control.space;
  struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &udp, sizeof udp);
  _exit(sendmsg(peer, &msg, MSG_NOSIGNAL) == 1 ? 0 : 1);
}

// Binds the DNS socket and the holder's listener; -1 if either fails.
static int BindBoth(int* udp, int* listener) {
  *udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in dns = {0};
  dns.sin_family = AF_INET;
  dns.sin_port = htons(53);
  inet_pton(AF_INET, "127.0.0.53", &dns.sin_addr);
  if (*udp < 0 || bind(*udp, (struct sockaddr*)&dns, sizeof dns) != 0) {
    Note("bind 127.0.0.53:53 (no DNS reports for this cell)");
    return -1;
  }
  *listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un a;
  socklen_t len = AbstractAddress(&a);
  if (*listener < 0 || bind(*listener, (struct sockaddr*)&a, len) != 0 || listen(*listener, 1) != 0) {
    Note("listen on @mcpcell-dns-relay (no DNS reports for this cell)");
    return -1;
  }
  return 0;
}

static int HoldThenExec(char** argv) {
  int udp = -1, listener = -1;
  if (BindBoth(&udp, &listener) == 0) {
    // Double fork: the holder is the init's child, not the server's (a
    // server reaping unknown children would only be confused by it).
    pid_t child = fork();
    if (child == 0) {
      setsid();
      if (fork() == 0) Hold(udp, listener);
      _exit(0);
    }
    if (child > 0) waitpid(child, NULL, 0);
  }
  if (udp >= 0) close(udp);
  if (listener >= 0) close(listener);
  execvp(argv[0], argv);
  dprintf(2, "mcpcell dns relay: exec %s: %s\n", argv[0], strerror(errno));
  return 127;
}

// The socket from the holder; it may not be there yet (the server's wrapper
// and this exec start at the same time): retried for up to 30 s.
static int TakeSocket(void) {
  struct sockaddr_un a;
  socklen_t len = AbstractAddress(&a);
  for (int attempt = 0; attempt < 1500; ++attempt) {
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return -1;
    if (connect(s, (struct sockaddr*)&a, len) == 0) {
      char byte = 0;
      struct iovec iov = {&byte, 1};
      union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int))];
      } control;
      struct msghdr msg = {0};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control.space;
      msg.msg_controllen = sizeof control.space;
      ssize_t n = recvmsg(s, &msg, MSG_CMSG_CLOEXEC);
      close(s);
      struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
      if (n != 1 || c == NULL || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return -1;
      int fd = -1;
      memcpy(&fd, CMSG_DATA(c), sizeof fd);
      return fd;
    }
    close(s);
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  errno = ETIMEDOUT;
  return -1;
}

static int WriteAll(int fd, const unsigned char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int ReadAll(int fd, unsigned char* p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static unsigned char frame[kHeader + kMaxDatagram];

// One datagram from a client to mcpcell.
static int Upstream(int udp) {
  struct sockaddr_in from;
  socklen_t len = sizeof from;
  ssize_t n = recvfrom(udp, frame + kHeader, kMaxDatagram, MSG_DONTWAIT, (struct sockaddr*)&from, &len);
  if (n < 0) return errno == EAGAIN || errno == EINTR || errno == ECONNREFUSED ? 0 : -1;
  if (from.sin_family != AF_INET) return 0;
  uint16_t size = htons((uint16_t)n);
  memcpy(frame, &size, 2);
  memcpy(frame + 2, &from.sin_port, 2);
  memcpy(frame + 4, &from.sin_addr.s_addr, 4);
  return WriteAll(1, frame, kHeader + (size_t)n);
}

// One reply from mcpcell to a client on the container's loopback.
static int Downstream(int udp) {
  if (ReadAll(0, frame, kHeader) != 0) return -1;
  uint16_t size;
  memcpy(&size, frame, 2);
  size_t n = ntohs(size);
  if (ReadAll(0, frame + kHeader, n) != 0) return -1;
  struct sockaddr_in to = {0};
  to.sin_family = AF_INET;
  memcpy(&to.sin_port, frame + 2, 2);
  memcpy(&to.sin_addr.s_addr, frame + 4, 4);
  if ((ntohl(to.sin_addr.s_addr) >> 24) != 127) return 0;
  sendto(udp, frame + kHeader, n, MSG_DONTWAIT, (struct sockaddr*)&to, sizeof to);
  return 0;
}

static int Serve(void) {
  int udp = TakeSocket();
  if (udp < 0) {
    Note("take the DNS socket from the holder");
    return 1;
  }
  struct pollfd fds[2] = {{udp, POLLIN, 0}, {0, POLLIN, 0}};
  for (;;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0 && Downstream(udp) != 0) return 0;  // mcpcell done
    if ((fds[0].revents & POLLIN) != 0 && Upstream(udp) != 0) return 0;
  }
}

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "serve") == 0) return Serve();
  if (argc >= 4 && strcmp(argv[1], "hold") == 0 && strcmp(argv[2], "--") == 0) return HoldThenExec(argv + 3);
  dprintf(2, "usage: %s hold -- CMD [ARGS...] | serve\n", argc > 0 ? argv[0] : "mcpcell-dns-relay");
  return 2;
}
