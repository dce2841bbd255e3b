// Adversary pass adv6 against the secret scan of the server's stderr
// (issue 13: cell/stderr_redact.h, cell/stderr_log.cc, docs/SECRETS.md "The
// server's stderr"). Each test is one attack with a GitHub token the rules
// know; it asserts the SECURE outcome (no token on the client's stderr or in
// the run's log). A test marked todo is a finding (it fails on 42fbd66), the
// rest held.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';

import { newGithubToken } from './lib/github_token.mjs';
import { runInCell, skipWithoutCell } from './lib/mcpcell.mjs';
import { logsOf, stateEnv } from './lib/run_logs.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

/** Asserts that none of `tokens` (label -> token), nor their middles, reached the client or the log. */
function assertNoneLeaked(r, state, tokens) {
  const log = logsOf(state);
  for (const [label, token] of Object.entries(tokens)) {
    for (const [where, text] of [['the client\'s stderr', r.stderr], ['the run\'s log', log]]) {
      const at = text.indexOf(token.slice(4, 34));
      assert.ok(at < 0, `${label}: the token reached ${where}: ...${JSON.stringify(text.slice(Math.max(0, at - 80), at + 120))}...`);
    }
  }
}

// Every way a process of the cell reaches its stderr, each with a token of
// its own: /dev/stderr and /proc/self/fd/2 (opened anew), fd 2 duplicated to
// fd 7, a carriage-return progress line, ANSI colour glued to the token, a
// background grandchild, every other descriptor the shell holds, a process
// that outlives the server (setsid), and a last line without its newline.
test('no path from a cell process to its stderr carries a token past the scan', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const k = Object.fromEntries(['devstderr', 'procfd2', 'dupfd', 'cr', 'ansi', 'grandchild', 'otherfd', 'late', 'partial']
    .map((label) => [label, newGithubToken()]));
  const script = [
    `printf 'via-devstderr %s\\n' '${k.devstderr}' > /dev/stderr`,
    `printf 'via-procfd2 %s\\n' '${k.procfd2}' > /proc/self/fd/2`,
    `exec 7>&2; printf 'via-dupfd %s\\n' '${k.dupfd}' >&7; exec 7>&-`,
    `printf 'via-cr 10%%\\r%s\\r100%%\\n' '${k.cr}' >&2`,
    `printf 'via-ansi \\033[1m%s\\033[22m\\n' '${k.ansi}' >&2`,
    `(printf 'via-grandchild %s\\n' '${k.grandchild}' >&2) & wait`,
    `for f in /proc/self/fd/*; do n=\${f##*/}; [ "$n" -gt 2 ] 2>/dev/null && printf 'via-otherfd %s\\n' '${k.otherfd}' > "$f" 2>/dev/null; done`,
    `setsid sh -c "sleep 0.3; printf 'via-late %s\\n' '${k.late}' >&2" </dev/null >/dev/null &`,
    `printf 'via-partial %s' '${k.partial}' >&2`,
  ].join('\n');
  const { state, env } = stateEnv('adv6-stderr-state');
  const r = await runInCell([], ['/bin/sh', '-c', script], { relay: 'on', env });
  assert.equal(r.code, 0, r.stderr);
  // The lines did arrive (masked): the attack was made, and the scan saw it.
  // (/dev/stderr and /proc/self/fd/2 cannot be opened anew in the cell: the
  // pipe is the host's; the shell says so, and nothing passes.)
  for (const label of ['dupfd', 'cr', 'ansi', 'grandchild', 'partial']) {
    assert.match(r.stderr, new RegExp(`via-${label} [^\\n]*\\[REDACTED:github-pat-classic\\]`), r.stderr);
  }
  assertNoneLeaked(r, state, k);
});

// A server killed in the middle of a line (the copy holds the partial line
// when the pipe's last writer dies): what it held is scanned, not dropped
// unscanned nor passed as it was.
test('a line held when the server is killed mid-write is masked', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const token = newGithubToken();
  const { state, env } = stateEnv('adv6-stderr-state');
  const r = await runInCell([], ['/bin/sh', '-c', `printf 'fatal: auth %s' '${token}' >&2; kill -9 $$`], { relay: 'on', env });
  assert.notEqual(r.code, 0, r.stderr);
  assertNoneLeaked(r, state, { killed: token });
  assert.match(r.stderr, /fatal: auth \[REDACTED:github-pat-classic\]/, r.stderr);
});

// Fail closed: a profile whose own rule cannot compile is refused before
// the server starts; a scanner library that cannot load (an empty
// libhs.so.5 first on LD_LIBRARY_PATH) withholds the stderr and says why.
test('a secret scan that cannot start does not let the stderr through unscanned', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const token = newGithubToken();
  const server = ['/bin/sh', '-c', `printf 'key %s\\n' '${token}' >&2`];
  const dir = makeTempDir('adv6-stderr-profile');
  const profile = path.join(dir, 'bad-rule.json');
  writeReadableFile(profile, JSON.stringify({
    mcpcell: { secret_scan: { mode: 'redact', rules: [{ name: 'broken', regex: '(unclosed[', caseless: false, bounded: true }] } },
  }));
  const { env } = stateEnv('adv6-stderr-state');
  const refused = await runInCell(['--permission-profile', profile], server, { relay: 'on', env });
  assert.ok(!refused.stderr.includes(token.slice(4, 34)), `the token passed a scan that could not start:\n${refused.stderr}`);
  assert.match(refused.stderr, /Vectorscan cannot compile/, refused.stderr);
  writeReadableFile(path.join(dir, 'libhs.so.5'), '');
  const withheld = await runInCell([], server, { relay: 'on', env: { ...env, LD_LIBRARY_PATH: dir } });
  assert.ok(!withheld.stderr.includes(token.slice(4, 34)), `the token passed a scan that could not start:\n${withheld.stderr}`);
  assert.match(withheld.stderr, /the run's stderr is withheld: its secret scan cannot start/, withheld.stderr);
});

// F1 end to end (MEDIUM): one long line — a debug dump of ~200 KiB, as a
// server logging a request or its config does — with a token where the 64 KiB
// cut of StderrRedactor::Feed falls. The two pieces are scanned apart and
// written back to back: the client and the log get the token whole. Control
// line first: the same token 100 bytes earlier is masked.
test('a token in a long stderr line is masked wherever the 64 KiB cut falls', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const [control, token] = [newGithubToken(), newGithubToken()];
  // "dump " + N 'a' + ' ' + token: the token starts at 6 + N.
  const line = (n, tok) => `{ printf 'dump '; head -c ${n} /dev/zero | tr '\\000' a; printf ' %s ' '${tok}'; ` +
    `head -c 140000 /dev/zero | tr '\\000' b; printf '\\n'; } >&2`;
  const script = `${line(65536 - 6 - 100, control)}\n${line(65536 - 6 - 10, token)}`;
  const { state, env } = stateEnv('adv6-stderr-state');
  const r = await runInCell([], ['/bin/sh', '-c', script], { relay: 'on', env });
  assert.equal(r.code, 0, r.stderr.slice(-2000));
  assertNoneLeaked(r, state, { control });
  assertNoneLeaked(r, state, { 'across the cut': token });
});

// F (INFO): docs/SECRETS.md says mcpcell tells "once per rule"; CopyScan::Tell
// (stderr_log.cc) tells after every read that masked something
// (StderrRedactor::TakeMasked empties its list each call). A server that logs
// a token on each of many lines gets a ~190-byte notice after each, which
// triples what reaches the client and the capped log (older lines rotate out
// sooner).
test('mcpcell tells once per rule that it masked a secret in the server\'s stderr', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const tokens = Array.from({ length: 8 }, () => newGithubToken());
  const script = tokens.map((tok) => `printf 'retry with %s\\n' '${tok}' >&2; sleep 0.05`).join('\n');
  const { state, env } = stateEnv('adv6-stderr-state');
  const r = await runInCell([], ['/bin/sh', '-c', script], { relay: 'on', env });
  assert.equal(r.code, 0, r.stderr);
  assertNoneLeaked(r, state, Object.fromEntries(tokens.map((tok, i) => [`line ${i}`, tok])));
  const notices = r.stderr.split('\n').filter((l) => l.startsWith('mcpcell: masked a secret (github-pat-classic)'));
  assert.equal(notices.length, 1, r.stderr);
});
