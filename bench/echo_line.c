/* echo_line: the smallest line-oriented stdio server — reads stdin, writes every complete line back
 * to stdout as soon as it is complete, exits on EOF. It stands in for an MCP server's transport with
 * no work behind it, so a round trip measures only the path (pipe, or pipe through a cell).
 * read(2)/write(2) directly: stdio buffering would hold replies back and measure nothing useful.
 */
#define _GNU_SOURCE /* memrchr */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_all(const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(1, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int main(void) {
  size_t cap = 1 << 20, len = 0;
  char *buf = malloc(cap);
  if (buf == NULL) return 1;
  for (;;) {
    if (len == cap) {
      cap *= 2;
      char *nb = realloc(buf, cap);
      if (nb == NULL) return 1;
      buf = nb;
    }
    ssize_t r = read(0, buf + len, cap - len);
    if (r < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (r == 0) break;
    len += (size_t)r;
    /* Echo everything up to and including the last newline; keep a partial line for later. */
    char *last = memrchr(buf, '\n', len);
    if (last == NULL) continue;
    size_t upto = (size_t)(last - buf) + 1;
    if (write_all(buf, upto) < 0) return 1;
    memmove(buf, buf + upto, len - upto);
    len -= upto;
  }
  return len == 0 ? 0 : (write_all(buf, len) < 0);
}
