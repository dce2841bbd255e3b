/* phase_time: where one launch of mcpcell spends its time, from its MCPCELL_TRACE_PHASES lines.
 *
 *   phase_time RUNS WARMUP CMD ARGS...
 *
 * Each run sets MCPCELL_TRACE_PHASES to the CLOCK_MONOTONIC time in ns just before posix_spawn, so
 * the first phase line ("static-init-start") counts exec and dynamic linking too; the run ends when
 * the process is reaped ("reaped"). Phase lines (src/util/phase_trace.h) come from the supervisor,
 * the cell's PID 1 and the server process before its execve; every process reports the CPU time of
 * its thread so far.
 *
 * Prints a Markdown table, phases in the order of their median time: the median time of the phase
 * since spawn, the median wall step from the phase before it in that run (whatever process said it),
 * and the median CPU step from the previous phase of the same process. No thresholds.
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

#define MAX_PHASES 64
#define MAX_NAME 64

struct phase {
  char name[MAX_NAME];
  double *at, *step, *cpu; /* per run, ms; NaN when the run did not report it */
};

static struct phase phases[MAX_PHASES];
static int n_phases;
static int runs;

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct phase *phase_named(const char *name) {
  for (int i = 0; i < n_phases; ++i) {
    if (strcmp(phases[i].name, name) == 0) return &phases[i];
  }
  if (n_phases == MAX_PHASES) return NULL;
  struct phase *p = &phases[n_phases++];
  snprintf(p->name, sizeof p->name, "%s", name);
  p->at = malloc(sizeof(double) * (size_t)runs);
  p->step = malloc(sizeof(double) * (size_t)runs);
  p->cpu = malloc(sizeof(double) * (size_t)runs);
  for (int r = 0; r < runs; ++r) p->at[r] = p->step[r] = p->cpu[r] = -1;
  return p;
}

struct line {
  int pid;
  char name[MAX_NAME];
  long long wall_us, cpu_us;
};

static int cmp_line(const void *a, const void *b) {
  const struct line *x = a, *y = b;
  return (x->wall_us > y->wall_us) - (x->wall_us < y->wall_us);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of the values >= 0 (a run that did not reach a phase reports -1). */
static double median_of(const double *v, int n, int *count) {
  double *s = malloc(sizeof(double) * (size_t)n);
  int k = 0;
  for (int i = 0; i < n; ++i) {
    if (v[i] >= 0) s[k++] = v[i];
  }
  *count = k;
  double m = -1;
  if (k > 0) {
    qsort(s, (size_t)k, sizeof *s, cmp_double);
    m = k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2.0;
  }
  free(s);
  return m;
}

/* Reads the child's stderr to EOF; keeps phase lines, echoes the rest on the first run. */
static int read_lines(int fd, struct line *lines, int max, int echo) {
  static char buf[1 << 16];
  size_t len = 0;
  ssize_t n;
  while ((n = read(fd, buf + len, sizeof buf - 1 - len)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) len += (size_t)n;
    if (len == sizeof buf - 1) break;
  }
  buf[len] = '\0';
  int k = 0;
  for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    struct line x;
    if (k < max && sscanf(l, "mcpcell-phase %d %63s %lld %lld", &x.pid, x.name, &x.wall_us, &x.cpu_us) == 4) {
      lines[k++] = x;
    } else if (echo) {
      fprintf(stderr, "phase_time: child said: %s\n", l);
    }
  }
  return k;
}

static void record_run(int r, struct line *lines, int k, long long reaped_us) {
  qsort(lines, (size_t)k, sizeof *lines, cmp_line);
  long long prev_wall = 0;
  for (int i = 0; i < k; ++i) {
    struct phase *p = phase_named(lines[i].name);
    if (!p) continue;
    p->at[r] = (double)lines[i].wall_us / 1e3;
    p->step[r] = (double)(lines[i].wall_us - prev_wall) / 1e3;
    prev_wall = lines[i].wall_us;
    long long prev_cpu = 0; /* a process's first phase: its CPU since it started */
    for (int j = i - 1; j >= 0; --j) {
      if (lines[j].pid == lines[i].pid) {
        prev_cpu = lines[j].cpu_us;
        break;
      }
    }
    p->cpu[r] = (double)(lines[i].cpu_us - prev_cpu) / 1e3;
  }
  struct phase *p = phase_named("reaped");
  if (p) {
    p->at[r] = (double)reaped_us / 1e3;
    p->step[r] = (double)(reaped_us - prev_wall) / 1e3;
  }
}

static int run_once(char **argv, int r, int echo) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, p[1], 2);
  char t0[32];
  long long start = now_ns();
  snprintf(t0, sizeof t0, "%lld", start);
  setenv("MCPCELL_TRACE_PHASES", t0, 1);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  if (rc != 0) {
    close(p[0]);
    fprintf(stderr, "phase_time: spawn %s: %s\n", argv[0], strerror(rc));
    return -1;
  }
  static struct line lines[256];
  int k = read_lines(p[0], lines, 256, echo);
  close(p[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  long long reaped_us = (now_ns() - start) / 1000;
  if (r >= 0) record_run(r, lines, k, reaped_us);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int cmp_phase(const void *a, const void *b) {
  const struct phase *x = a, *y = b;
  int n;
  double mx = median_of(x->at, runs, &n), my = median_of(y->at, runs, &n);
  return (mx > my) - (mx < my);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: phase_time RUNS WARMUP CMD ARGS...\n");
    return 2;
  }
  runs = atoi(argv[1]);
  int warmup = atoi(argv[2]);
  if (runs < 1 || warmup < 0) return 2;
  int failures = 0;
  for (int i = 0; i < warmup; ++i) run_once(argv + 3, -1, i == 0);
  for (int r = 0; r < runs; ++r) failures += run_once(argv + 3, r, warmup == 0 && r == 0) != 0;
  qsort(phases, (size_t)n_phases, sizeof *phases, cmp_phase);
  printf("| phase (%d runs) | at ms (median) | step ms (median) | CPU step ms (median) | runs |\n", runs);
  printf("| --- | ---: | ---: | ---: | ---: |\n");
  for (int i = 0; i < n_phases; ++i) {
    int n_at, n_step, n_cpu;
    double at = median_of(phases[i].at, runs, &n_at);
    double step = median_of(phases[i].step, runs, &n_step);
    double cpu = median_of(phases[i].cpu, runs, &n_cpu);
    char cpu_text[32] = "—";
    if (n_cpu > 0) snprintf(cpu_text, sizeof cpu_text, "%.3f", cpu);
    printf("| %s | %.3f | %.3f | %s | %d |\n", phases[i].name, at, step, cpu_text, n_at);
  }
  if (failures) printf("\n%d of %d runs exited non-zero.\n", failures, runs);
  return 0;
}
