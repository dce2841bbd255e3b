// The server's stderr is scanned as its results are (cell/stderr_redact.h):
// with the default scan (redact) a token a server prints reaches neither the
// client's stderr nor the run's log (`mcpcell logs`), even split across two
// writes or on a last line without a newline; mcpcell says which rule
// masked it. With the profile's secret_scan mode "off" the line is as written.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';

import { newGithubToken } from './lib/github_token.mjs';
import { runInCell, skipWithoutCell } from './lib/mcpcell.mjs';
import { logsOf, stateEnv } from './lib/run_logs.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const newToken = newGithubToken;

// The server: a token split across two writes with a pause between, then a
// second one on a last line with no newline.
function leakScript(a, b) {
  return `printf 'connecting with ${a.slice(0, 12)}' >&2; sleep 0.1; printf '${a.slice(12)} now\\n' >&2; ` +
    `printf 'plain line\\n' >&2; printf 'last ${b}' >&2`;
}

test('a token the server prints on stderr is masked before the client and the log see it', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const [a, b] = [newToken(), newToken()];
  const { state, env } = stateEnv();
  const r = await runInCell([], ['/bin/sh', '-c', leakScript(a, b)], { relay: 'on', env });
  assert.equal(r.code, 0, r.stderr);
  for (const token of [a, b]) {
    assert.ok(!r.stderr.includes(token), `a token reached the client's stderr:\n${r.stderr}`);
    assert.ok(!r.stderr.includes(token.slice(4, 30)), `part of a token reached the client's stderr:\n${r.stderr}`);
  }
  assert.match(r.stderr, /connecting with \[REDACTED:[a-z0-9_-]+\] now\n/, r.stderr);
  assert.match(r.stderr, /plain line\n/);
  assert.match(r.stderr, /last \[REDACTED:[a-z0-9_-]+\]/, r.stderr);
  assert.match(r.stderr, /mcpcell: masked a secret \([a-z0-9_-]+\) in the server's stderr/, r.stderr);
  const log = logsOf(state);
  assert.ok(log.includes('plain line'), `the run's log has the server's lines:\n${log}`);
  for (const token of [a, b]) assert.ok(!log.includes(token), `a token reached the run's log:\n${log}`);
});

test('with the profile\'s secret_scan mode off, the server\'s stderr passes as written', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const [a, b] = [newToken(), newToken()];
  const dir = makeTempDir('stderr-secrets-profile');
  const profile = path.join(dir, 'off.json');
  writeReadableFile(profile, JSON.stringify({ mcpcell: { secret_scan: { mode: 'off' } } }));
  const { env } = stateEnv();
  const r = await runInCell(['--permission-profile', profile], ['/bin/sh', '-c', leakScript(a, b)], { relay: 'on', env });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stderr.includes(`connecting with ${a} now\n`), r.stderr);
  assert.ok(r.stderr.includes(`last ${b}`), r.stderr);
});
