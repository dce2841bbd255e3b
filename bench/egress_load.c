/* egress_load: the loopback upstream and the load generator of bench/egress.sh.
 *
 *   egress_load serve
 *       Upstream HTTP server on 127.0.0.1:<ephemeral port> (printed on stdout). One epoll thread,
 *       no keep-alive: answers "GET /bytes/N" with N bytes and Connection: close, then closes.
 *       Bulk bodies are streamed from one 1 MiB buffer, so 1 GiB costs no memory.
 *   egress_load latency N ROUNDS CONFIGS...
 *       Per config, N sequential requests, each on a NEW connection: connect, CONNECT (through a
 *       proxy), GET 1 KiB; timed from connect() to the last body byte. The N requests are spread
 *       over ROUNDS rounds interleaved across configs (after N/20 untimed ones per config) so that
 *       drift of this shared machine hits every config alike. Prints p50/p99/min in µs.
 *   egress_load bulk BYTES REPS CONFIGS...
 *       One connection (+ CONNECT), GET BYTES, timed from the GET to the last byte; REPS times
 *       interleaved; prints the median MB/s (10^6 bytes/s).
 *   egress_load rps CONCURRENCY SECONDS ROUNDS CONFIGS...
 *       CONCURRENCY clients on one epoll loop; each opens a new connection (+ CONNECT) per request,
 *       GETs 1 KiB and reads to EOF, then starts over. Per round and config: 0.5 s warm-up, then
 *       SECONDS measured; prints completed requests per second over all rounds, and errors.
 *   egress_load relay UPSTREAM_PORT
 *       A reference relay on 127.0.0.1:<ephemeral port> (printed): the bare mechanics of a CONNECT
 *       proxy (one epoll thread, recv/send, every CONNECT to 127.0.0.1:UPSTREAM_PORT, no rules, no
 *       DNS, no audit, no timers). Not a proxy: what this machine allows at best, a floor.
 *   egress_load freeport
 *       Prints a TCP port that was free on 127.0.0.1 a moment ago (bound to 0, then closed), for a
 *       proxy's config. Racy in theory; the script checks that each proxy answers on it.
 *   egress_load idle N PORT TARGET
 *       Opens N tunnels through the proxy at PORT (CONNECT answered 200, no data sent), prints
 *       "ready N", then holds them until killed (SIGTERM). The script measures the proxy's RSS.
 *
 * CONFIGS is LABEL PORT TARGET [pid=PID] [:: LABEL PORT TARGET [pid=PID]]...: TARGET "-" means
 * direct (GET sent to 127.0.0.1:PORT, the upstream itself); otherwise TARGET is "host:port" for a
 * CONNECT sent to the proxy listening on 127.0.0.1:PORT. With pid=PID, rps also reports the CPU
 * time (user + system, all threads, from /proc/PID/stat) that process spent per request in the
 * measured window: unlike req/s, that figure hardly moves with the rest of the machine's load. Results are lines "RESULT\tlabel\tkey\tvalue" for the script
 * to tabulate. Any failed request is counted and reported; latency/bulk stop at the first failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SMALL_BODY 1024
#define CHUNK (1u << 20)

static char g_body[CHUNK];

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what) {
  perror(what);
  exit(2);
}

static void raise_nofile(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

static struct sockaddr_in loopback(int port) {
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return sa;
}

/* ------------------------------------------------------------------ upstream server */

struct sconn {
  char in[2048];
  size_t inlen;
  int writing;
  char hdr[160];
  size_t hdrlen, hdroff;
  unsigned long long body_left;
};

static struct sconn **g_sconn; /* indexed by fd */

static void sclose(int ep, int fd) {
  epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
  close(fd);
  free(g_sconn[fd]);
  g_sconn[fd] = NULL;
}

/* Writes what the socket takes; returns 1 when the response is complete, 0 on EAGAIN, -1 on error. */
static int spump(struct sconn *c, int fd) {
  while (c->hdroff < c->hdrlen || c->body_left > 0) {
    size_t body = c->body_left < CHUNK ? (size_t)c->body_left : CHUNK;
    struct iovec iov[2];
    int n = 0;
    if (c->hdroff < c->hdrlen) {
      iov[n].iov_base = c->hdr + c->hdroff;
      iov[n++].iov_len = c->hdrlen - c->hdroff;
    }
    if (body > 0) {
      iov[n].iov_base = g_body;
      iov[n++].iov_len = body;
    }
    ssize_t w = writev(fd, iov, n);
    if (w < 0) return errno == EAGAIN ? 0 : -1;
    size_t left = (size_t)w;
    size_t h = c->hdrlen - c->hdroff;
    if (h > left) h = left;
    c->hdroff += h;
    c->body_left -= left - h;
  }
  return 1;
}

static void sread(int ep, int fd) {
  struct sconn *c = g_sconn[fd];
  ssize_t r = read(fd, c->in + c->inlen, sizeof c->in - 1 - c->inlen);
  if (r <= 0) {
    if (r < 0 && errno == EAGAIN) return;
    sclose(ep, fd);
    return;
  }
  c->inlen += (size_t)r;
  c->in[c->inlen] = 0;
  if (!strstr(c->in, "\r\n\r\n")) {
    if (c->inlen + 1 >= sizeof c->in) sclose(ep, fd);
    return;
  }
  unsigned long long n = 0;
  if (sscanf(c->in, "GET /bytes/%llu ", &n) != 1) {
    static const char bad[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    if (write(fd, bad, sizeof bad - 1) < 0) { /* closing anyway */ }
    sclose(ep, fd);
    return;
  }
  c->hdrlen = (size_t)snprintf(c->hdr, sizeof c->hdr,
                               "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                               "Content-Length: %llu\r\nConnection: close\r\n\r\n", n);
  c->body_left = n;
  c->writing = 1;
  int done = spump(c, fd);
  if (done != 0) {
    sclose(ep, fd); /* done (or failed): no keep-alive, the close is the end of the exchange */
    return;
  }
  struct epoll_event ev = {.events = EPOLLOUT, .data.fd = fd};
  epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
}

static _Noreturn void serve(void) {
  raise_nofile();
  memset(g_body, 'x', sizeof g_body);
  signal(SIGPIPE, SIG_IGN);
  g_sconn = calloc(65536, sizeof *g_sconn);
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (ls < 0) die("egress_load serve: socket");
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = loopback(0);
  if (bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0) die("egress_load serve: bind 127.0.0.1:0");
  if (listen(ls, 4096) < 0) die("egress_load serve: listen");
  socklen_t sl = sizeof sa;
  getsockname(ls, (struct sockaddr *)&sa, &sl);
  printf("%d\n", ntohs(sa.sin_port));
  fflush(stdout);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls};
  epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
  struct epoll_event evs[256];
  for (;;) {
    int n = epoll_wait(ep, evs, 256, -1);
    if (n < 0 && errno != EINTR) die("egress_load serve: epoll_wait");
    for (int i = 0; i < n; i++) {
      int fd = evs[i].data.fd;
      if (fd == ls) {
        int c;
        while ((c = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
          if (c >= 65536) { close(c); continue; }
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          g_sconn[c] = calloc(1, sizeof(struct sconn));
          struct epoll_event cev = {.events = EPOLLIN, .data.fd = c};
          epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
        }
        continue;
      }
      struct sconn *c = g_sconn[fd];
      if (!c) continue;
      if (!c->writing) {
        sread(ep, fd);
      } else {
        int done = spump(c, fd);
        if (done != 0) sclose(ep, fd);
      }
    }
  }
}

/* ------------------------------------------------------------------ blocking client */

struct config {
  const char *label;
  int port;
  const char *target; /* NULL: direct */
  double *us;
  long nus;
  double *mbs;
  long completed, errors;
  double measured_s;
  int pid;         /* the proxy's, for its CPU time; 0: not measured */
  double cpu_s;    /* its CPU seconds within the measured windows */
};

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Reads up to the end of an HTTP header into buf; returns the header length (bytes after it may
 * follow in buf, *have says how many were read in all), or -1 with a message. */
static long read_header(int fd, char *buf, size_t cap, size_t *have, const char *what) {
  *have = 0;
  for (;;) {
    ssize_t r = read(fd, buf + *have, cap - 1 - *have);
    if (r <= 0) {
      fprintf(stderr, "egress_load: %s: %s before the end of the header\n", what,
              r == 0 ? "EOF" : strerror(errno));
      return -1;
    }
    *have += (size_t)r;
    buf[*have] = 0;
    char *end = strstr(buf, "\r\n\r\n");
    if (end) {
      if (strncmp(buf, "HTTP/1.", 7) != 0 || strncmp(buf + 8, " 200", 4) != 0) {
        char *eol = strstr(buf, "\r\n");
        fprintf(stderr, "egress_load: %s: answered '%.*s'\n", what, (int)(eol - buf), buf);
        return -1;
      }
      return end + 4 - buf;
    }
    if (*have + 1 >= cap) {
      fprintf(stderr, "egress_load: %s: header longer than %zu bytes\n", what, cap);
      return -1;
    }
  }
}

/* Connects to 127.0.0.1:port and, through a proxy, CONNECTs to target. Returns the fd or -1. */
static int open_tunnel(const struct config *cf) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("egress_load: socket");
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct sockaddr_in sa = loopback(cf->port);
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    fprintf(stderr, "egress_load: %s: connect 127.0.0.1:%d: %s\n", cf->label, cf->port, strerror(errno));
    close(fd);
    return -1;
  }
  if (!cf->target) return fd;
  char req[300], buf[1024];
  int n = snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", cf->target, cf->target);
  size_t have;
  if (write_all(fd, req, (size_t)n) < 0 || read_header(fd, buf, sizeof buf, &have, cf->label) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The Host names the tunnel's target, as a real client's does (the proxy's tunnel gate resets a
 * plain-HTTP request that names another host); direct, the upstream itself. */
static const char *get_request(const struct config *cf, unsigned long long bytes, char *buf, size_t cap, size_t *len) {
  char direct[32];
  snprintf(direct, sizeof direct, "127.0.0.1:%d", cf->port);
  *len = (size_t)snprintf(buf, cap, "GET /bytes/%llu HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", bytes,
                          cf->target ? cf->target : direct);
  return buf;
}

/* One fetch of `bytes` on fd; returns seconds from the GET to the last body byte, or -1. */
static double fetch(const struct config *cf, int fd, unsigned long long bytes, char *buf, size_t cap) {
  char req[400];
  size_t len;
  get_request(cf, bytes, req, sizeof req, &len);
  double t0 = now_s();
  if (write_all(fd, req, len) < 0) return -1;
  size_t have;
  long hl = read_header(fd, buf, cap, &have, cf->label);
  if (hl < 0) return -1;
  unsigned long long got = have - (size_t)hl;
  while (got < bytes) {
    ssize_t r = read(fd, buf, cap);
    if (r <= 0) {
      fprintf(stderr, "egress_load: %s: body ended after %llu of %llu bytes\n", cf->label, got, bytes);
      return -1;
    }
    got += (unsigned long long)r;
  }
  double t = now_s() - t0;
  while (read(fd, buf, cap) > 0) { /* to EOF, untimed: the server closes */ }
  return t;
}

static int parse_configs(int argc, char **argv, struct config *cfs, int max) {
  int n = 0;
  for (int i = 0; i < argc;) {
    if (i + 3 > argc || n == max) {
      fprintf(stderr, "egress_load: configs are LABEL PORT TARGET [pid=PID] [:: LABEL PORT TARGET [pid=PID]]...\n");
      exit(2);
    }
    memset(&cfs[n], 0, sizeof cfs[n]);
    cfs[n].label = argv[i];
    cfs[n].port = atoi(argv[i + 1]);
    cfs[n].target = strcmp(argv[i + 2], "-") == 0 ? NULL : argv[i + 2];
    i += 3;
    if (i < argc && strncmp(argv[i], "pid=", 4) == 0) cfs[n].pid = atoi(argv[i++] + 4);
    n++;
    if (i < argc && strcmp(argv[i], "::") == 0) i++;
  }
  return n;
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

/* An untimed request (warm-up). */
static double one_latency(struct config *cf, char *buf, size_t cap) {
  int fd = open_tunnel(cf);
  if (fd < 0) return -1;
  double f = fetch(cf, fd, SMALL_BODY, buf, cap);
  close(fd);
  return f;
}

static int latency(int argc, char **argv) {
  if (argc < 5) return 2;
  long n = atol(argv[2]), rounds = atol(argv[3]);
  struct config cfs[8];
  int ncf = parse_configs(argc - 4, argv + 4, cfs, 8);
  static char buf[65536];
  for (int c = 0; c < ncf; c++) {
    cfs[c].us = calloc((size_t)n, sizeof(double));
    for (long w = 0; w < n / 20 + 1; w++) {
      if (one_latency(&cfs[c], buf, sizeof buf) < 0) return 1;
    }
  }
  long per = (n + rounds - 1) / rounds;
  for (long r = 0; r < rounds; r++) {
    for (int c = 0; c < ncf; c++) {
      struct config *cf = &cfs[c];
      for (long i = 0; i < per && cf->nus < n; i++) {
        double t0 = now_s();
        int fd = open_tunnel(cf);
        if (fd < 0) return 1;
        char req[400];
        size_t len, have;
        get_request(cf, SMALL_BODY, req, sizeof req, &len);
        if (write_all(fd, req, len) < 0) return 1;
        long hl = read_header(fd, buf, sizeof buf, &have, cf->label);
        if (hl < 0) return 1;
        size_t got = have - (size_t)hl;
        while (got < SMALL_BODY) {
          ssize_t rd = read(fd, buf, sizeof buf);
          if (rd <= 0) {
            fprintf(stderr, "egress_load: %s: short body\n", cf->label);
            return 1;
          }
          got += (size_t)rd;
        }
        cf->us[cf->nus++] = (now_s() - t0) * 1e6;
        while (read(fd, buf, sizeof buf) > 0) { /* EOF: the server closes */ }
        close(fd);
      }
    }
  }
  for (int c = 0; c < ncf; c++) {
    struct config *cf = &cfs[c];
    qsort(cf->us, (size_t)cf->nus, sizeof(double), cmp_double);
    printf("RESULT\t%s\tlat_p50_us\t%.1f\n", cf->label, pct(cf->us, cf->nus, 0.50));
    printf("RESULT\t%s\tlat_p99_us\t%.1f\n", cf->label, pct(cf->us, cf->nus, 0.99));
    printf("RESULT\t%s\tlat_min_us\t%.1f\n", cf->label, cf->us[0]);
    printf("RESULT\t%s\tlat_n\t%ld\n", cf->label, cf->nus);
  }
  return 0;
}

static int bulk(int argc, char **argv) {
  if (argc < 5) return 2;
  unsigned long long bytes = strtoull(argv[2], NULL, 10);
  long reps = atol(argv[3]);
  struct config cfs[8];
  int ncf = parse_configs(argc - 4, argv + 4, cfs, 8);
  size_t cap = 1u << 20;
  char *buf = malloc(cap);
  for (int c = 0; c < ncf; c++) cfs[c].mbs = calloc((size_t)reps, sizeof(double));
  for (long r = 0; r < reps; r++) {
    for (int c = 0; c < ncf; c++) {
      struct config *cf = &cfs[c];
      int fd = open_tunnel(cf);
      if (fd < 0) return 1;
      double s = fetch(cf, fd, bytes, buf, cap);
      close(fd);
      if (s < 0) return 1;
      cf->mbs[r] = (double)bytes / 1e6 / s;
      fprintf(stderr, "egress_load: bulk %s: %.0f MB/s\n", cf->label, cf->mbs[r]);
    }
  }
  for (int c = 0; c < ncf; c++) {
    qsort(cfs[c].mbs, (size_t)reps, sizeof(double), cmp_double);
    double med = reps % 2 ? cfs[c].mbs[reps / 2] : (cfs[c].mbs[reps / 2 - 1] + cfs[c].mbs[reps / 2]) / 2;
    printf("RESULT\t%s\tbulk_mbs\t%.0f\n", cfs[c].label, med);
    printf("RESULT\t%s\tbulk_min_mbs\t%.0f\n", cfs[c].label, cfs[c].mbs[0]);
    printf("RESULT\t%s\tbulk_max_mbs\t%.0f\n", cfs[c].label, cfs[c].mbs[reps - 1]);
  }
  return 0;
}

/* ------------------------------------------------------------------ concurrent client */

/* User + system CPU seconds of every thread of `pid` so far (proc(5): fields 14 and 15 of
 * /proc/PID/stat, in clock ticks), or -1. The command name (field 2) may hold spaces: parse after
 * its closing parenthesis. */
static double cpu_seconds(int pid) {
  char path[64], line[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(line, 1, sizeof line - 1, f);
  fclose(f);
  line[n] = 0;
  char *p = strrchr(line, ')');
  unsigned long long ut = 0, st = 0;
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) return -1;
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

enum { ST_CONNECTING, ST_PROXY_REPLY, ST_RESPONSE };

struct cconn {
  int fd;
  int state;
  char buf[512];
  size_t len;
  size_t got;
};

static long g_completed, g_errors;
static const char *g_last_error;

static void cstart(int ep, struct cconn *k, const struct config *cf) {
  k->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (k->fd < 0) die("egress_load rps: socket");
  int one = 1;
  setsockopt(k->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  k->state = ST_CONNECTING;
  k->len = k->got = 0;
  struct sockaddr_in sa = loopback(cf->port);
  if (connect(k->fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS) die("egress_load rps: connect");
  struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = k};
  epoll_ctl(ep, EPOLL_CTL_ADD, k->fd, &ev);
}

static void cfail(int ep, struct cconn *k, const struct config *cf, const char *why) {
  g_errors++;
  g_last_error = why;
  close(k->fd);
  cstart(ep, k, cf);
}

static void csend(int ep, struct cconn *k, const struct config *cf, const char *req, size_t len, int next) {
  /* A request of ~100 bytes fits an empty socket buffer: a short write would be a broken peer. */
  if (write(k->fd, req, len) != (ssize_t)len) {
    cfail(ep, k, cf, "write");
    return;
  }
  k->state = next;
  k->len = k->got = 0;
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = k};
  epoll_ctl(ep, EPOLL_CTL_MOD, k->fd, &ev);
}

static void cevent(int ep, struct cconn *k, const struct config *cf, const char *connect_req, size_t clen,
                   const char *get, size_t glen) {
  if (k->state == ST_CONNECTING) {
    int err = 0;
    socklen_t el = sizeof err;
    getsockopt(k->fd, SOL_SOCKET, SO_ERROR, &err, &el);
    if (err) {
      cfail(ep, k, cf, strerror(err));
      return;
    }
    if (cf->target)
      csend(ep, k, cf, connect_req, clen, ST_PROXY_REPLY);
    else
      csend(ep, k, cf, get, glen, ST_RESPONSE);
    return;
  }
  char tmp[4096];
  ssize_t r = read(k->fd, tmp, sizeof tmp);
  if (r < 0) {
    if (errno == EAGAIN) return;
    cfail(ep, k, cf, strerror(errno));
    return;
  }
  if (k->state == ST_PROXY_REPLY) {
    if (r == 0) {
      cfail(ep, k, cf, "EOF before the CONNECT reply");
      return;
    }
    size_t take = (size_t)r < sizeof k->buf - 1 - k->len ? (size_t)r : sizeof k->buf - 1 - k->len;
    memcpy(k->buf + k->len, tmp, take);
    k->len += take;
    k->buf[k->len] = 0;
    if (!strstr(k->buf, "\r\n\r\n")) {
      if (k->len + 1 >= sizeof k->buf) cfail(ep, k, cf, "CONNECT reply too long");
      return;
    }
    if (strncmp(k->buf + 8, " 200", 4) != 0) {
      cfail(ep, k, cf, "CONNECT refused");
      return;
    }
    csend(ep, k, cf, get, glen, ST_RESPONSE);
    return;
  }
  if (r > 0) {
    if (k->got == 0 && (r < 12 || strncmp(tmp + 8, " 200", 4) != 0)) {
      cfail(ep, k, cf, "GET not answered 200");
      return;
    }
    k->got += (size_t)r;
    return;
  }
  if (k->got < SMALL_BODY) {
    cfail(ep, k, cf, "short response");
    return;
  }
  g_completed++;
  close(k->fd); /* close() removes it from the epoll set */
  cstart(ep, k, cf);
}

static void rps_run(struct config *cf, int conc, double warm, double secs) {
  char creq[300], get[400];
  size_t clen = 0, glen;
  if (cf->target)
    clen = (size_t)snprintf(creq, sizeof creq, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", cf->target, cf->target);
  get_request(cf, SMALL_BODY, get, sizeof get, &glen);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  struct cconn *ks = calloc((size_t)conc, sizeof *ks);
  for (int i = 0; i < conc; i++) cstart(ep, &ks[i], cf);
  struct epoll_event evs[256];
  double t0 = now_s(), start = t0 + warm, end = start + secs;
  long base_c = 0, base_e = 0;
  int measuring = 0;
  double cpu0 = 0;
  for (;;) {
    double t = now_s();
    if (!measuring && t >= start) {
      measuring = 1;
      base_c = g_completed;
      base_e = g_errors;
      if (cf->pid) cpu0 = cpu_seconds(cf->pid);
    }
    if (t >= end) break;
    int n = epoll_wait(ep, evs, 256, 50);
    for (int i = 0; i < n; i++) cevent(ep, evs[i].data.ptr, cf, creq, clen, get, glen);
    if (g_errors - base_e > 100000) break;
  }
  cf->completed += g_completed - base_c;
  cf->errors += g_errors - base_e;
  cf->measured_s += now_s() - start;
  if (cf->pid) cf->cpu_s += cpu_seconds(cf->pid) - cpu0;
  for (int i = 0; i < conc; i++) close(ks[i].fd);
  close(ep);
  free(ks);
}

static int rps(int argc, char **argv) {
  if (argc < 6) return 2;
  int conc = atoi(argv[2]);
  double secs = atof(argv[3]);
  long rounds = atol(argv[4]);
  struct config cfs[8];
  int ncf = parse_configs(argc - 5, argv + 5, cfs, 8);
  for (long r = 0; r < rounds; r++) {
    for (int c = 0; c < ncf; c++) {
      rps_run(&cfs[c], conc, 0.5, secs);
      fprintf(stderr, "egress_load: rps %s: %ld requests, %ld errors so far%s%s\n", cfs[c].label,
              cfs[c].completed, cfs[c].errors, g_last_error ? "; last error: " : "",
              g_last_error ? g_last_error : "");
      g_last_error = NULL;
      usleep(300000); /* let the last round's connections drain before the next config */
    }
  }
  for (int c = 0; c < ncf; c++) {
    printf("RESULT\t%s\trps\t%.0f\n", cfs[c].label, (double)cfs[c].completed / cfs[c].measured_s);
    printf("RESULT\t%s\trps_errors\t%ld\n", cfs[c].label, cfs[c].errors);
    if (cfs[c].pid && cfs[c].completed > 0)
      printf("RESULT\t%s\trps_cpu_us\t%.0f\n", cfs[c].label, cfs[c].cpu_s * 1e6 / (double)cfs[c].completed);
  }
  return 0;
}

static int idle(int argc, char **argv) {
  if (argc != 5) return 2;
  struct config cf = {.label = "idle", .port = atoi(argv[3]), .target = argv[4]};
  long n = atol(argv[2]);
  for (long i = 0; i < n; i++) {
    if (open_tunnel(&cf) < 0) {
      fprintf(stderr, "egress_load idle: tunnel %ld of %ld failed\n", i + 1, n);
      return 1;
    }
  }
  printf("ready %ld\n", n);
  fflush(stdout);
  for (;;) pause(); /* SIGTERM ends us; the kernel closes the tunnels */
}

/* ------------------------------------------------------------------ reference relay */

/* The bare mechanics of a CONNECT proxy, as a floor for the real ones: one epoll thread (level-
 * triggered), every CONNECT goes to 127.0.0.1:UPSTREAM (no rules, no name resolution, no audit,
 * no timeouts), bytes copied with recv/send through one shared 256 KiB buffer; a short send parks
 * the rest on the heap and stops reading that direction until the peer drains it (EPOLLOUT). */

#define RELAY_BUF (256u << 10)

enum { R_HEAD, R_CONNECTING, R_TUNNEL };

struct rdir {            /* one direction of a tunnel */
  char *pend;            /* bytes read but not yet accepted by the peer */
  size_t plen, poff;
  int eof;               /* the source said EOF; the peer was half-closed */
};

struct rconn;
struct rref {            /* what epoll hands back: which connection, which of its sockets */
  struct rconn *c;
  int up;
};

struct rconn {
  int fd[2];             /* [0] client, [1] upstream */
  uint32_t ev[2];        /* current epoll interest of each */
  int state, dead;
  char head[512];
  size_t hl;
  struct rdir d[2];      /* [0] client → upstream, [1] upstream → client */
  struct rref ref[2];
  struct rconn *next;    /* graveyard: freed after the epoll batch that killed it */
};

static int g_rep, g_rup_port;
static char g_rbuf[RELAY_BUF];
static struct rconn *g_rgrave;

static void rkill(struct rconn *c) {
  for (int i = 0; i < 2; i++)
    if (c->fd[i] >= 0) close(c->fd[i]); /* close(2) also drops it from the epoll set */
  for (int i = 0; i < 2; i++) free(c->d[i].pend);
  c->dead = 1;
  c->next = g_rgrave;
  g_rgrave = c;
}

/* Interest of socket i: read while its outgoing direction is open and not parked, write while
 * the direction into it has parked bytes. One epoll_ctl only when that changes. */
static void rarm(struct rconn *c, int i) {
  uint32_t want = 0;
  if (!c->d[i].eof && c->d[i].plen == 0) want |= EPOLLIN;
  if (c->d[1 - i].plen > 0) want |= EPOLLOUT;
  if (want == c->ev[i]) return;
  struct epoll_event e = {.events = want, .data.ptr = &c->ref[i]};
  epoll_ctl(g_rep, EPOLL_CTL_MOD, c->fd[i], &e);
  c->ev[i] = want;
}

/* Sends parked bytes of direction i; returns -1 on error. */
static int rflush(struct rconn *c, int i) {
  struct rdir *d = &c->d[i];
  while (d->poff < d->plen) {
    ssize_t m = send(c->fd[1 - i], d->pend + d->poff, d->plen - d->poff, MSG_NOSIGNAL);
    if (m < 0) return errno == EAGAIN ? 0 : -1;
    d->poff += (size_t)m;
  }
  free(d->pend);
  d->pend = NULL;
  d->plen = d->poff = 0;
  return 0;
}

/* Moves what socket i has to the other socket; returns -1 on error. */
static int rpump(struct rconn *c, int i) {
  struct rdir *d = &c->d[i];
  while (!d->eof && d->plen == 0) {
    ssize_t n = recv(c->fd[i], g_rbuf, sizeof g_rbuf, 0);
    if (n < 0) return errno == EAGAIN ? 0 : -1;
    if (n == 0) {
      d->eof = 1;
      shutdown(c->fd[1 - i], SHUT_WR);
      return 0;
    }
    ssize_t m = send(c->fd[1 - i], g_rbuf, (size_t)n, MSG_NOSIGNAL);
    if (m < 0 && errno != EAGAIN) return -1;
    if (m < 0) m = 0;
    if (m < n) {
      d->plen = (size_t)(n - m);
      d->pend = malloc(d->plen);
      memcpy(d->pend, g_rbuf + m, d->plen);
    }
    if ((size_t)n < sizeof g_rbuf) return 0; /* most likely drained: let epoll say */
  }
  return 0;
}

static void rconnect(struct rconn *c) {
  c->fd[1] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd[1] < 0) {
    rkill(c);
    return;
  }
  int one = 1;
  setsockopt(c->fd[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct sockaddr_in sa = loopback(g_rup_port);
  if (connect(c->fd[1], (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS) {
    rkill(c);
    return;
  }
  struct epoll_event e = {.events = EPOLLOUT, .data.ptr = &c->ref[1]};
  epoll_ctl(g_rep, EPOLL_CTL_ADD, c->fd[1], &e);
  c->ev[1] = EPOLLOUT;
  c->state = R_CONNECTING;
}

static void revent(struct rconn *c, int i, uint32_t events) {
  if (c->state == R_HEAD) {
    ssize_t m = recv(c->fd[0], c->head + c->hl, sizeof c->head - 1 - c->hl, 0);
    if (m < 0 && errno == EAGAIN) return;
    if (m <= 0 || (c->hl += (size_t)m) + 1 >= sizeof c->head) {
      rkill(c);
      return;
    }
    c->head[c->hl] = 0;
    if (strstr(c->head, "\r\n\r\n")) rconnect(c);
    return;
  }
  if (c->state == R_CONNECTING) {
    if (i == 0) { /* the client spoke or left before the 200: not our client */
      rkill(c);
      return;
    }
    int err = 0;
    socklen_t el = sizeof err;
    getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &err, &el);
    static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    if (err || send(c->fd[0], ok, sizeof ok - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof ok - 1)) {
      rkill(c);
      return;
    }
    c->state = R_TUNNEL;
    rarm(c, 1);
    return;
  }
  if ((events & EPOLLOUT) && c->d[1 - i].plen > 0) {
    if (rflush(c, 1 - i) < 0 || rpump(c, 1 - i) < 0) {
      rkill(c);
      return;
    }
  }
  if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && rpump(c, i) < 0) {
    rkill(c);
    return;
  }
  if (c->d[0].eof && c->d[1].eof && c->d[0].plen == 0 && c->d[1].plen == 0) {
    rkill(c);
    return;
  }
  rarm(c, 0);
  rarm(c, 1);
}

static _Noreturn void relay(int up_port) {
  g_rup_port = up_port;
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = loopback(0);
  socklen_t sl = sizeof sa;
  if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 4096) < 0 ||
      getsockname(ls, (struct sockaddr *)&sa, &sl) < 0)
    die("egress_load relay: listen on 127.0.0.1");
  printf("%d\n", ntohs(sa.sin_port));
  fflush(stdout);
  g_rep = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
  epoll_ctl(g_rep, EPOLL_CTL_ADD, ls, &ev);
  struct epoll_event evs[256];
  for (;;) {
    int n = epoll_wait(g_rep, evs, 256, -1);
    if (n < 0 && errno != EINTR) die("egress_load relay: epoll_wait");
    for (int k = 0; k < n; k++) {
      struct rref *r = evs[k].data.ptr;
      if (!r) {
        int fd;
        while ((fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          struct rconn *c = calloc(1, sizeof *c);
          c->fd[0] = fd;
          c->fd[1] = -1;
          c->ref[0] = (struct rref){c, 0};
          c->ref[1] = (struct rref){c, 1};
          c->ev[0] = EPOLLIN;
          struct epoll_event e = {.events = EPOLLIN, .data.ptr = &c->ref[0]};
          epoll_ctl(g_rep, EPOLL_CTL_ADD, fd, &e);
        }
        continue;
      }
      if (!r->c->dead) revent(r->c, r->up, evs[k].events);
    }
    while (g_rgrave) {
      struct rconn *c = g_rgrave;
      g_rgrave = c->next;
      free(c);
    }
  }
}

static int freeport(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = loopback(0);
  socklen_t sl = sizeof sa;
  if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || getsockname(fd, (struct sockaddr *)&sa, &sl) < 0)
    die("egress_load freeport");
  printf("%d\n", ntohs(sa.sin_port));
  close(fd);
  return 0;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  raise_nofile();
  const char *mode = argc > 1 ? argv[1] : "";
  int rc = 2;
  if (strcmp(mode, "serve") == 0) serve();
  else if (strcmp(mode, "latency") == 0) rc = latency(argc, argv);
  else if (strcmp(mode, "bulk") == 0) rc = bulk(argc, argv);
  else if (strcmp(mode, "rps") == 0) rc = rps(argc, argv);
  else if (strcmp(mode, "idle") == 0) rc = idle(argc, argv);
  else if (strcmp(mode, "freeport") == 0) rc = freeport();
  else if (strcmp(mode, "relay") == 0 && argc == 3) relay(atoi(argv[2]));
  if (rc == 2)
    fprintf(stderr, "usage: egress_load serve | latency N ROUNDS CONFIGS | bulk BYTES REPS CONFIGS |"
                    " rps CONCURRENCY SECONDS ROUNDS CONFIGS | idle N PORT TARGET | freeport | relay UPSTREAM_PORT\n"
                    "  CONFIGS: LABEL PORT TARGET [pid=PID] [:: ...]... (TARGET - = direct)\n");
  return rc;
}
