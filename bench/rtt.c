/* rtt: stdio cost of a line-echo server reached through a pipe, bare or through a cell.
 *
 *   rtt ROUNDTRIPS LINE_BYTES TOTAL_MIB TP_LINE_BYTES TP_REPS LABEL CMD ARGS... [:: LABEL CMD...]...
 *
 * For every config (the first is the baseline):
 *  - latency: spawn CMD with its stdin and stdout on pipes, send one LINE_BYTES line (newline
 *    included, shaped like a JSON-RPC ping) and wait for the whole echo before sending the next;
 *    ROUNDTRIPS timed round trips after ROUNDTRIPS/20 untimed ones; median/p90/p99 in µs.
 *  - throughput: spawn CMD again; a writer thread pipelines TOTAL_MIB MiB of TP_LINE_BYTES lines
 *    while the main thread reads the echo; MB/s (10^6 bytes) from first write to last byte read,
 *    after one untimed round trip so that the server's start-up is not in the figure.
 *    Repeated TP_REPS times, interleaved across configs; the median is reported.
 * Each child's stdin is closed at the end and its exit status must be 0.
 * Prints two Markdown tables with ratios against the first config. No thresholds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct child {
  pid_t pid;
  int to;   /* its stdin */
  int from; /* its stdout */
};

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double pct(const double *sorted, long n, double p) {
  long k = (long)(p * (double)n + 0.999999) - 1;
  if (k < 0) k = 0;
  if (k >= n) k = n - 1;
  return sorted[k];
}

static double median(double *v, long n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static void die(const char *what) {
  perror(what);
  exit(2);
}

static struct child spawn_child(char **argv) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) die("rtt: pipe2");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  struct child c;
  int rc = posix_spawnp(&c.pid, argv[0], &fa, NULL, argv, environ);
  if (rc != 0) {
    fprintf(stderr, "rtt: spawn %s: %s\n", argv[0], strerror(rc));
    exit(2);
  }
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  c.to = in[1];
  c.from = out[0];
  return c;
}

/* Close its stdin (the MCP way of asking a server to stop), drain, and reap; 0 when it exited 0. */
static int finish_child(struct child *c, const char *label) {
  close(c->to);
  char sink[4096];
  while (read(c->from, sink, sizeof sink) > 0) {
  }
  close(c->from);
  int st;
  while (waitpid(c->pid, &st, 0) < 0)
    if (errno != EINTR) die("rtt: waitpid");
  if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
    fprintf(stderr, "rtt: %s ended with wait status 0x%x\n", label, (unsigned)st);
    return 1;
  }
  return 0;
}

static void write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      die("rtt: write to child");
    }
    p += w;
    n -= (size_t)w;
  }
}

/* A JSON-RPC ping padded to exactly `bytes` bytes including the newline. RTT_SHAPE=call: a
 * tools/call for the latency runs (answered by mcp_answer with a result of the same length, so
 * the echo is compared by length only) and an id-less notification for the throughput runs (ids
 * would repeat while pending); what an MCP-aware relay must parse and judge. */
static int shape_call(void) { return getenv("RTT_SHAPE") != NULL && strcmp(getenv("RTT_SHAPE"), "call") == 0; }

static char *make_line_shaped(size_t bytes, int notification) {
  const char *head = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"p\":\"";
  const char *tail = "\"}\n";
  if (shape_call()) {
    head = notification ? "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"p\":\""
                        : "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"e\",\"p\":\"";
    tail = "\"}}\n";
  }
  size_t fixed = strlen(head) + strlen(tail);
  if (bytes < fixed) bytes = fixed;
  char *s = malloc(bytes + 1);
  if (s == NULL) die("rtt: malloc");
  size_t pad = bytes - fixed;
  strcpy(s, head);
  memset(s + strlen(head), 'x', pad);
  strcpy(s + strlen(head) + pad, tail);
  return s;
}

static char *make_line(size_t bytes) { return make_line_shaped(bytes, 0); }

static int latency(char **argv, const char *label, long n, size_t line_bytes, double *out_us) {
  struct child c = spawn_child(argv);
  char *line = make_line(line_bytes);
  size_t len = strlen(line);
  char *buf = malloc(len + 1);
  long warm = n / 20;
  for (long i = -warm; i < n; i++) {
    double t0 = now_us();
    write_all(c.to, line, len);
    size_t got = 0;
    while (got < len) {
      ssize_t r = read(c.from, buf + got, len - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        fprintf(stderr, "rtt: %s: echo ended after %zu of %zu bytes (round trip %ld)\n", label, got,
                len, i);
        exit(2);
      }
      got += (size_t)r;
    }
    if (i >= 0) out_us[i] = now_us() - t0;
  }
  if (!shape_call() && memcmp(buf, line, len) != 0) {
    fprintf(stderr, "rtt: %s: echo differs from what was sent\n", label);
    exit(2);
  }
  free(buf);
  free(line);
  return finish_child(&c, label);
}

struct writer_arg {
  int fd;
  const char *line;
  size_t len;
  size_t lines;
};

static void *writer(void *p) {
  struct writer_arg *a = p;
  /* Batch lines into 64 KiB writes: a client writing whole messages, not one syscall per line. */
  size_t per = 65536 / a->len;
  if (per == 0) per = 1;
  char *chunk = malloc(per * a->len);
  for (size_t i = 0; i < per; i++) memcpy(chunk + i * a->len, a->line, a->len);
  for (size_t sent = 0; sent < a->lines;) {
    size_t k = a->lines - sent < per ? a->lines - sent : per;
    write_all(a->fd, chunk, k * a->len);
    sent += k;
  }
  free(chunk);
  return NULL;
}

static int throughput(char **argv, const char *label, size_t total, size_t line_bytes, double *mbps) {
  struct child c = spawn_child(argv);
  char *line = make_line_shaped(line_bytes, 1);
  struct writer_arg a = {c.to, line, strlen(line), total / strlen(line)};
  size_t expect = a.lines * a.len;
  char *buf = malloc(1 << 20);
  /* One round trip first, so the timing starts with the server up (launch is measured elsewhere). */
  write_all(c.to, line, a.len);
  for (size_t got = 0; got < a.len;) {
    ssize_t r = read(c.from, buf + got, a.len - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      fprintf(stderr, "rtt: %s: no echo of the first line\n", label);
      exit(2);
    }
    got += (size_t)r;
  }
  pthread_t th;
  double t0 = now_us();
  if (pthread_create(&th, NULL, writer, &a) != 0) die("rtt: pthread_create");
  size_t got = 0;
  while (got < expect) {
    ssize_t r = read(c.from, buf, 1 << 20);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      fprintf(stderr, "rtt: %s: echo ended after %zu of %zu bytes\n", label, got, expect);
      exit(2);
    }
    got += (size_t)r;
  }
  double us = now_us() - t0;
  pthread_join(th, NULL);
  *mbps = (double)expect / us; /* bytes per µs == MB/s */
  free(buf);
  free(line);
  return finish_child(&c, label);
}

struct config {
  const char *label;
  char **argv;
};

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr,
            "usage: %s ROUNDTRIPS LINE_BYTES TOTAL_MIB TP_LINE_BYTES TP_REPS LABEL CMD... [:: LABEL CMD...]...\n",
            argv[0]);
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  long n = atol(argv[1]);
  size_t line_bytes = (size_t)atol(argv[2]);
  size_t total = (size_t)atol(argv[3]) << 20;
  size_t tp_line = (size_t)atol(argv[4]);
  int reps = atoi(argv[5]);
  if (n < 1 || line_bytes < 2 || total == 0 || tp_line < 2 || reps < 1) {
    fprintf(stderr, "rtt: bad numbers\n");
    return 2;
  }
  struct config cfg[8];
  int ncfg = 0;
  for (int i = 6; i < argc;) {
    if (ncfg == 8) return 2;
    struct config *c = &cfg[ncfg++];
    c->label = argv[i++];
    c->argv = &argv[i];
    while (i < argc && strcmp(argv[i], "::") != 0) i++;
    if (&argv[i] == c->argv) {
      fprintf(stderr, "rtt: config %s has no command\n", c->label);
      return 2;
    }
    if (i < argc) argv[i++] = NULL;
  }

  int bad = 0;
  double *us = malloc((size_t)n * sizeof(double));
  double med[8], p90[8], p99[8], tp[8][16], tpmed[8];
  if (reps > 16) reps = 16;
  for (int k = 0; k < ncfg; k++) {
    bad |= latency(cfg[k].argv, cfg[k].label, n, line_bytes, us);
    med[k] = median(us, n);
    p90[k] = pct(us, n, 0.90);
    p99[k] = pct(us, n, 0.99);
  }
  for (int r = 0; r < reps; r++)
    for (int k = 0; k < ncfg; k++) bad |= throughput(cfg[k].argv, cfg[k].label, total, tp_line, &tp[k][r]);
  for (int k = 0; k < ncfg; k++) tpmed[k] = median(tp[k], reps);

  printf("| round trip of one %zu-byte line (%ld sequential, after %ld warm-up) | median µs | p90 µs | p99 µs | × bare |\n",
         line_bytes, n, n / 20);
  printf("| --- | ---: | ---: | ---: | ---: |\n");
  for (int k = 0; k < ncfg; k++)
    printf("| %s | %.1f | %.1f | %.1f | %.2f |\n", cfg[k].label, med[k], p90[k], p99[k], med[k] / med[0]);
  printf("\n| throughput, %zu-byte lines pipelined, %zu MiB per run | MB/s (median of %d) | × bare |\n",
         tp_line, total >> 20, reps);
  printf("| --- | ---: | ---: |\n");
  for (int k = 0; k < ncfg; k++) printf("| %s | %.0f | %.2f |\n", cfg[k].label, tpmed[k], tpmed[k] / tpmed[0]);
  free(us);
  return bad;
}
