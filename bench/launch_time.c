/* launch_time: wall-clock time from spawn to reaped exit of several commands, interleaved.
 *
 *   launch_time RUNS WARMUP LABEL CMD ARGS... [:: LABEL CMD ARGS...]...
 *
 * The first group is the baseline ("bare"); a group labelled "bwrap", when present, is the second
 * reference. Runs are interleaved round-robin (run i of every config, then run i+1 ...) so that drift
 * of the machine (frequency, page cache, other load) hits every config alike. Each run is
 * posix_spawn (glibc uses clone(CLONE_VM|CLONE_VFORK), so the driver adds as little as possible)
 * followed by waitpid; stdin and stdout are /dev/null, stderr is inherited so a failing config is
 * visible. A run whose exit status is not 0 is counted as a failure and the config is marked.
 *
 * Prints a Markdown table: median, p90, min, overhead of the median over bare in ms, and ratios of
 * medians against bare and bwrap. No thresholds: this reports, it does not judge.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct config {
  const char *label;
  char **argv;
  double *ms;
  int failures;
  int last_status;
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static double pct(const double *sorted, int n, double p) {
  int k = (int)(p * n + 0.999999) - 1;
  if (k < 0) k = 0;
  if (k >= n) k = n - 1;
  return sorted[k];
}

static double median(const double *sorted, int n) {
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

/* One spawn+wait; returns elapsed ms, stores the wait status. */
static double run_once(struct config *c, posix_spawn_file_actions_t *fa, int *status) {
  pid_t pid;
  double t0 = now_ms();
  int rc = posix_spawnp(&pid, c->argv[0], fa, NULL, c->argv, environ);
  if (rc != 0) {
    fprintf(stderr, "launch_time: spawn %s (%s): %s\n", c->label, c->argv[0], strerror(rc));
    exit(2);
  }
  while (waitpid(pid, status, 0) < 0) {
    if (errno != EINTR) {
      perror("launch_time: waitpid");
      exit(2);
    }
  }
  return now_ms() - t0;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s RUNS WARMUP LABEL CMD ARGS... [:: LABEL CMD ARGS...]...\n", argv[0]);
    return 2;
  }
  int runs = atoi(argv[1]);
  int warmup = atoi(argv[2]);
  if (runs < 1 || warmup < 0) {
    fprintf(stderr, "launch_time: RUNS must be >= 1 and WARMUP >= 0\n");
    return 2;
  }

  struct config cfg[16];
  int ncfg = 0;
  for (int i = 3; i < argc;) {
    if (ncfg == 16) {
      fprintf(stderr, "launch_time: at most 16 configs\n");
      return 2;
    }
    struct config *c = &cfg[ncfg++];
    memset(c, 0, sizeof *c);
    c->label = argv[i++];
    c->argv = &argv[i];
    while (i < argc && strcmp(argv[i], "::") != 0) i++;
    if (&argv[i] == c->argv) {
      fprintf(stderr, "launch_time: config %s has no command\n", c->label);
      return 2;
    }
    if (i < argc) argv[i++] = NULL; /* terminate this argv in place */
    c->ms = calloc((size_t)runs, sizeof(double));
    if (c->ms == NULL) return 2;
  }

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);

  int status;
  for (int w = 0; w < warmup; w++)
    for (int k = 0; k < ncfg; k++) run_once(&cfg[k], &fa, &status);

  for (int r = 0; r < runs; r++) {
    for (int k = 0; k < ncfg; k++) {
      cfg[k].ms[r] = run_once(&cfg[k], &fa, &status);
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        cfg[k].failures++;
        cfg[k].last_status = status;
      }
    }
  }

  double base = 0, ref = -1;
  double med[16];
  for (int k = 0; k < ncfg; k++) {
    qsort(cfg[k].ms, (size_t)runs, sizeof(double), cmp_double);
    med[k] = median(cfg[k].ms, runs);
    if (k == 0) base = med[k];
    /* "bwrap" or "bwrap --unshare-all": the bwrap baseline, whatever its flags say */
    if (strncmp(cfg[k].label, "bwrap", 5) == 0 && (cfg[k].label[5] == 0 || cfg[k].label[5] == ' ')) ref = med[k];
  }

  printf("| launch of /bin/true (%d runs each, interleaved) | median ms | p90 ms | min ms | over bare ms | × bare | × bwrap |\n",
         runs);
  printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (int k = 0; k < ncfg; k++) {
    struct config *c = &cfg[k];
    char vs_ref[32] = "–";
    if (ref > 0) snprintf(vs_ref, sizeof vs_ref, "%.2f", med[k] / ref);
    char fail[96] = "";
    if (c->failures)
      snprintf(fail, sizeof fail, " **(%d/%d runs failed, last status 0x%x)**", c->failures, runs,
               (unsigned)c->last_status);
    printf("| %s%s | %.2f | %.2f | %.2f | %+.2f | %.2f | %s |\n", c->label, fail, med[k],
           pct(c->ms, runs, 0.9), c->ms[0], med[k] - base, med[k] / base, vs_ref);
  }
  for (int k = 0; k < ncfg; k++)
    if (cfg[k].failures) return 1;
  return 0;
}
