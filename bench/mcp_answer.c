/* mcp_answer: the smallest MCP-shaped stdio server for bench/relay.sh — every line that is a
 * tools/call request ("method":"tools/call" in it) is answered with a JSON-RPC result for id 1
 * padded to exactly the request's length (so rtt can wait for that many bytes); every other
 * line is echoed as it came. read(2)/write(2) directly, no stdio buffering; exits on EOF.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
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

/* The answer to a call of `len` bytes (newline included): {"jsonrpc":"2.0","id":1,"result":{"p":"xx…"}}\n */
static int answer(size_t len) {
  static char out[1 << 16];
  const char *head = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"p\":\"";
  const char *tail = "\"}}\n";
  size_t fixed = strlen(head) + strlen(tail);
  if (len < fixed || len > sizeof out) return -1;
  size_t pad = len - fixed;
  memcpy(out, head, strlen(head));
  memset(out + strlen(head), 'x', pad);
  memcpy(out + strlen(head) + pad, tail, strlen(tail));
  return write_all(out, len);
}

int main(void) {
  size_t cap = 1 << 20, len = 0;
  char *buf = malloc(cap);
  if (buf == NULL) return 1;
  for (;;) {
    ssize_t r = read(0, buf + len, cap - len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
    size_t start = 0;
    for (;;) {
      char *nl = memchr(buf + start, '\n', len - start);
      if (nl == NULL) break;
      size_t line = (size_t)(nl - (buf + start)) + 1;
      int rc = memmem(buf + start, line, "\"method\":\"tools/call\"", 21) != NULL ? answer(line)
                                                                               : write_all(buf + start, line);
      if (rc != 0) return 1;
      start += line;
    }
    memmove(buf, buf + start, len - start);
    len -= start;
    if (len == cap) return 1; /* a line longer than 1 MiB: not this bench's shape */
  }
  return 0;
}
