// Adversary pass adv12 against the secret scan of a run's stderr and the
// messages mcpcell writes itself (cell/stderr_redact.cc, guard/secret_rules.cc,
// cli/launch_plan.cc). Each test asserts the SECURE outcome (no secret on the
// client's stderr or in the run's log); a test marked todo is a finding (it
// fails on main 74765d7), the rest held. Unit tests of the same findings:
// tests/unit/adv12_secret_leaks_test.cc.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { newGithubToken } from './lib/github_token.mjs';
import { runInCell, runMcpcell, skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { E2E_DIR, NODE_BIN } from './lib/paths.mjs';
import { logsOf, stateEnv } from './lib/run_logs.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

/** Asserts that no secret of `secrets` (label -> text) reached the client's stderr or the run's log. */
function assertNoneLeaked(r, state, secrets) {
  const log = state ? logsOf(state) : '';
  for (const [label, secret] of Object.entries(secrets)) {
    for (const [where, text] of [['the client\'s stderr', r.stderr], ['the run\'s log', log]]) {
      const at = text.indexOf(secret);
      assert.ok(at < 0, `${label}: reached ${where}: ...${JSON.stringify(text.slice(Math.max(0, at - 80), at + 120))}...`);
    }
  }
}

/** `n` lines of 64 base64 characters: a private key's body. */
function keyBody(n) {
  return Array.from({ length: n }, () => randomBytes(48).toString('base64'));
}

// A PEM key printed in two writes with a pause inside a body line (a
// buffered writer flushing at its buffer's size, then busy): the copy flushes
// the partial line after half a second of quiet through
// StderrRedactor::Piece, which knows a key carried over a 64 KiB cut
// (cut_key_) but not the multi-line key block open since the header
// (in_key_): the partial line is scanned alone, matches nothing, and passes.
test('part of a private key body line written before a pause is masked', {
  timeout: 30_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const body = keyBody(6);
  const first = `-----BEGIN PRIVATE KEY-----\\n${body[0]}\\n${body[1]}\\n${body[2].slice(0, 40)}`;
  const rest = `${body[2].slice(40)}\\n${body[3]}\\n${body[4]}\\n-----END PRIVATE KEY-----\\n`;
  const { state, env } = stateEnv('adv12-stderr-state');
  const r = await runInCell([], ['/bin/sh', '-c', `printf '%b' '${first}' >&2; sleep 1.2; printf '%b' '${rest}' >&2`], { relay: 'on', env });
  assert.equal(r.code, 0, r.stderr);
  // Control: the whole body lines are masked.
  assert.match(r.stderr, /\[REDACTED:private-key-block\]/, r.stderr);
  assert.ok(!r.stderr.includes(body[1]), r.stderr);
  assertNoneLeaked(r, state, { 'the body line written before the pause': body[2].slice(0, 40) });
});

// The AWS SDK for JavaScript's credentials, as console.error prints them
// (util.inspect): the key id is masked, the secret half is not (the rule
// needs "aws_secret_access_key"; "secretAccessKey" has no "aws").
test('an AWS key pair a server logs as the SDK\'s credentials object is masked, secret half included', {
  timeout: 30_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const id = 'AKIA' + 'QWERTYUIOPASDFGH'.split('').map((c, i) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'[(c.charCodeAt(0) * 7 + i) % 32]).join('');
  const secret = randomBytes(30).toString('base64').replace(/\+/g, 'x');
  assert.equal(secret.length, 40);
  const { state, env } = stateEnv('adv12-stderr-state');
  const script = `printf "credentials: {\\n  accessKeyId: '%s',\\n  secretAccessKey: '%s'\\n}\\n" '${id}' '${secret}' >&2`;
  const r = await runInCell([], ['/bin/sh', '-c', script], { relay: 'on', env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /\[REDACTED:aws-access-key-id\]/, `control: the key id is masked:\n${r.stderr}`);
  assertNoneLeaked(r, state, { 'the secret access key': secret });
});

// Held: the same secret next to the keyword the rule knows.
test('held: an AWS secret key a server logs as its environment is masked', { timeout: 30_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const secret = randomBytes(30).toString('base64').replace(/\+/g, 'x');
  const { state, env } = stateEnv('adv12-stderr-state');
  const r = await runInCell([], ['/bin/sh', '-c', `printf 'AWS_SECRET_ACCESS_KEY=%s\\n' '${secret}' >&2`], { relay: 'on', env });
  assert.equal(r.code, 0, r.stderr);
  assertNoneLeaked(r, state, { 'the secret access key': secret });
});

// mcpcell's own refusal of an allow run whose npm registry is not the
// public one (launch_plan.cc WhySourceIsSwappable) names the registry as
// configured: VisibleOnTerminal(config->registry), user, password and path
// token included — registry_url.h says messages show the origin only. The
// refusal goes to the client's stderr (its log file), outside any scan.
test('a refused allow run does not print the npm registry URL\'s credentials', {
  timeout: 60_000,
}, async () => {
  const root = makeTempDir('adv12-registry');
  const policy = path.join(root, 'official.json');
  writeReadableFile(policy, JSON.stringify({ rules: [{ name: 'official-pinned', condition: { not: 'untrusted_source' }, action: 'allow' }] }));
  const token = newGithubToken();
  for (const [label, registry] of [['userinfo', `http://ci:${token}@127.0.0.1:9/`], ['path', `http://127.0.0.1:9/${token}/npm/`]]) {
    // As a client's env block sets it (the user's own HOME and cache: the cache check passes).
    const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', policy, 'memory'], {
      input: '',
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8',
        npm_config_registry: registry, npm_config_update_notifier: 'false', npm_config_fetch_retries: '0' },
      guardMs: 50_000,
    });
    assert.notEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, /not the public npm registry/, `control: the refusal is the one meant:\n${r.stderr}`);
    assert.ok(!r.stderr.includes(token.slice(4)), `${label}: the registry's token reached the client's stderr:\n${r.stderr}`);
  }
});

// ---------------------------------------------------------------------------
// The relay: a keyword secret as a JSON member of the message itself.
// JsonStrings puts a NUL between a member's key and its value, and the
// keyword rules (aws-secret-access-key, aws-session-token, ...) need keyword,
// '=' or ':' and value in one text: {"AWS_SECRET_ACCESS_KEY": "<key>"} in tool
// arguments (an env map) or in structuredContent matches nothing. The raw
// fast path does match the line and hands it to the full scan, which clears it.
// ---------------------------------------------------------------------------

test('an AWS secret key as a member of tool call arguments does not reach the server, nor one in structuredContent the client', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const dir = makeWritableDir('adv12-args');
  const conf = makeTempDir('adv12-args-conf');
  const id = 'AKIA' + randomBytes(10).toString('hex').toUpperCase().replace(/[0-9]/g, 'Q').slice(0, 16);
  const secret = randomBytes(30).toString('base64').replace(/\+/g, 'x');
  const profileFile = path.join(conf, 'profile.json');
  writeReadableFile(profileFile, JSON.stringify({ aws_access_key_id: id, aws_secret_access_key: secret }));
  const got = path.join(dir, 'received.json');
  const s = startServer(t, ['--relay=on', '--read', E2E_DIR, '--read', conf, '--write', dir],
    [NODE_BIN, path.join(E2E_DIR, 'servers', 'adv12_args_server.mjs'), got, profileFile]);
  try {
    await s.connect();
  } catch (e) {
    assert.fail(`connect through mcpcell failed: ${e.message}\nmcpcell stderr:\n${s.stderr()}`);
  }
  await s.client.callTool({ name: 'configure', arguments: { command: 'aws s3 ls', env: { AWS_ACCESS_KEY_ID: id, AWS_SECRET_ACCESS_KEY: secret } } });
  const received = readFileSync(got, 'utf8');
  const result = JSON.stringify(await s.client.callTool({ name: 'profile', arguments: {} }));
  await s.client.close();
  await s.exited;
  assert.ok(!received.includes(id), `control: the key id reached the server masked: ${received}`);
  assert.ok(!received.includes(secret), `the secret access key reached the server: ${received}`);
  assert.ok(!result.includes(secret), `the secret access key reached the client: ${result}`);
});

// The launch record (cli/audit_events.cc LaunchEvent) writes the server's
// argv as it is, and the decision record its source: a token given to a
// server on its command line (`server --token ghp_...`, as many MCP servers
// take it, and as client configs write it) lands in the audit log, which the
// relay otherwise keeps clean (its own records are masked: MaskSecretsIn).
test('a token in the server\'s argv does not reach the audit log', {
  timeout: 30_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const token = newGithubToken();
  const audit = path.join(makeWritableDir('adv12-audit'), 'audit.jsonl');
  const r = await runInCell(['--audit-log', audit], ['/bin/sh', '-c', 'exit 0', 'server', '--github-token', token], { relay: 'on' });
  assert.equal(r.code, 0, r.stderr);
  const log = readFileSync(audit, 'utf8');
  assert.match(log, /"event":"launch"/, log);
  assert.ok(!log.includes(token.slice(4)), `the token is in the audit log:\n${log.split('\n').filter((l) => l.includes(token)).join('\n')}`);
});

// A server that prints a private key to stdout by mistake (console.log):
// the relay passes a line that is no JSON-RPC message to the client as it
// came, scanned one line at a time (McpRelay::GuardPlainText). No line of a
// PEM holds header and body, so nothing is masked; the stderr copy would
// have masked the same lines (its key-block state, stderr_redact.cc).
test('a private key a server prints to stdout does not reach the client', {
  timeout: 30_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const body = keyBody(8);
  const pem = ['-----BEGIN OPENSSH PRIVATE KEY-----', ...body, '-----END OPENSSH PRIVATE KEY-----'].join('\\n');
  const r = await runInCell([], ['/bin/sh', '-c', `printf '%b\\n' '${pem}'; printf '%b\\n' '${pem}' >&2`], { relay: 'on' });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stderr.includes(body[3]), `control: the stderr copy masks it:\n${r.stderr}`);
  assert.ok(!r.stdout.includes(body[3]), `the key's body reached the client's stdin:\n${r.stdout}`);
});
