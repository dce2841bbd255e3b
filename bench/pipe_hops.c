/* pipe_hops: the relay's plumbing with none of its work — spawns CMD with its stdin and stdout on
 * new pipes and copies our stdin to its stdin and its stdout to our stdout, one thread per
 * direction, blocking read(2) and write(2) of whatever each read returned. Put in front of a
 * server in bench/rtt.c, it is a bare pipe plus the two extra pipe hops and thread wake-ups that
 * mcpcell's relay adds to every round trip (and --relay=off does not: the cell then reads and
 * writes the client's own pipes), so the relay's own cost is relay-on minus this.
 *   pipe_hops CMD ARGS...
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct hop {
  int from, to;
};

static void *copy(void *arg) {
  struct hop *h = arg;
  static __thread char buf[1 << 16];
  for (;;) {
    ssize_t n = read(h->from, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = write(h->to, buf + off, (size_t)(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return NULL;
      off += w;
    }
  }
  close(h->to);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: pipe_hops CMD ARGS...\n");
    return 2;
  }
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) return 2;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[1], &fa, NULL, argv + 1, environ);
  if (rc != 0) {
    fprintf(stderr, "pipe_hops: spawn %s: %s\n", argv[1], strerror(rc));
    return 2;
  }
  close(in[0]);
  close(out[1]);
  struct hop up = {0, in[1]}, down = {out[0], 1};
  pthread_t t1, t2;
  if (pthread_create(&t1, NULL, copy, &up) != 0 || pthread_create(&t2, NULL, copy, &down) != 0) return 2;
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return 2;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}
