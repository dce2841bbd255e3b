// Adversary pass adv17 against perf15's launch cuts other than the stderr
// copy thread (adv17_stderr_thread.test.mjs). Every test here HELD (passes
// with perf15's binary); they pin the behaviour the cuts must keep.
//
//  - 048958a (no records-out-of-reach walk without a writable bind): every
//    refusal of CheckNotWritableByCell/CheckDirNotWritableByCell needs a
//    kBind && writable mount, the same predicate as the early return, and
//    the check runs on the spec after AddNpxCache: equivalent. Pinned: an
//    audit log, a hard-linked audit log, and mcpcell's state dir under a
//    --write grant are still refused; a --read of the state dir leaves it
//    unwritable from the cell.
//  - 5b47f99 (no catalog parse for a command): FindBySource matches on kind,
//    and no catalog entry has a command source, so a command never had an
//    entry. Pinned: an npx:// catalog source still gets its entry's network
//    allow-list and required-secret warning; `npx -y PKG` as a command gets
//    none, as on main.
//  - c6be628 (launch record only with an audit log): RecordLaunch has no
//    other user (ps records take plan.server, not the launch event). Pinned:
//    with --audit-log the launch record still masks a token in the argv.
//  - cbf39db (ids through pidfd): checked by hand on 6.18 (python pidfd_open +
//    PIDFD_GET_INFO vs /proc/PID/status): a zombie, a zombie thread-group
//    leader with a live thread (its leader's ids, as status), the same
//    real_cred ids munged the same way; pid reuse is the same race as before.
//    Not new: a thread's own ids after a raw setresuid(2) in a non-leader
//    thread are in neither (/proc/PID/task/TID only): the claim's walk never
//    saw them.
//    ProcIsOurPidNamespace could be fooled only by a /proc of an ancestor pid
//    namespace where our pid number coincides (then pidfd_open names other
//    processes): contrived, not reachable by a cell.

import assert from 'node:assert/strict';
import { linkSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { newGithubToken } from './lib/github_token.mjs';
import { EXIT, runInCell, runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

function stateEnv() {
  const state = makeTempDir('adv17-held-state');
  chmodSync(state, 0o700);
  return { state, env: { ...process.env, XDG_STATE_HOME: state } };
}

test('held (048958a): an audit log inside a --write grant is refused', { timeout: 30_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const { env } = stateEnv();
  const rw = makeWritableDir('adv17-rw');
  const r = await runInCell(['--write', rw, '--audit-log', path.join(rw, 'audit.log')], ['/bin/true'], { env, input: '' });
  assert.equal(r.code, EXIT.usage, r.stderr);
  assert.match(r.stderr, /--audit-log/);
});

test('held (048958a): an audit log hard-linked into a --write grant is refused', { timeout: 30_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const { env } = stateEnv();
  const rw = makeWritableDir('adv17-rw');
  const logs = makeTempDir('adv17-audit');
  const log = path.join(logs, 'audit.log');
  writeFileSync(log, '', { mode: 0o600 });
  linkSync(log, path.join(rw, 'alias.log'));
  const r = await runInCell(['--write', rw, '--audit-log', log], ['/bin/true'], { env, input: '' });
  assert.equal(r.code, EXIT.usage, r.stderr);
  assert.match(r.stderr, /hard links/);
});

test('held (048958a): mcpcell\'s state dir under a --write grant is refused', { timeout: 30_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const rw = makeWritableDir('adv17-rw');
  const state = path.join(rw, 'state');
  mkdirSync(state, { mode: 0o700 });
  const r = await runInCell(['--write', rw], ['/bin/true'], { env: { ...process.env, XDG_STATE_HOME: state }, input: '' });
  assert.notEqual(r.code, 0, r.stderr);
  assert.match(r.stderr, /plant files there|which the cell can change/);
});

test('held (048958a): without a writable bind, a --read of mcpcell\'s state dir is not writable in the cell', {
  timeout: 30_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const { state, env } = stateEnv();
  await runInCell([], ['/bin/true'], { env, input: '' });  // makes <state>/mcpcell/logs
  const logs = path.join(state, 'mcpcell', 'logs');
  const r = await runInCell(['--read', state], ['/bin/sh', '-c',
    `echo forged > ${logs}/forged.log && echo WROTE; ls -la ${logs} >/dev/null 2>&1; for f in ${logs}/*.log; do echo x >> "$f" && echo APPENDED; done; true`],
  { env, input: '' });
  assert.ok(!/WROTE|APPENDED/.test(r.stdout), r.stdout + r.stderr);
});

test('held (5b47f99): an npx:// catalog source keeps its entry; the same package as a command has none', {
  timeout: 60_000,
}, async () => {
  const { env } = stateEnv();
  const entry = await runMcpcell(['run', '--dry-run', 'npx://@modelcontextprotocol/server-github@2025.4.8'], { env, input: '' });
  assert.equal(entry.code, 0, entry.stderr);
  const d = JSON.parse(entry.stdout);
  assert.deepEqual(d.cell.network.allow_hosts, ['api.github.com', 'github.com']);
  assert.match(entry.stderr, /needs GITHUB_PERSONAL_ACCESS_TOKEN/);
  const cmd = await runMcpcell(['run', '--dry-run', '--', 'npx', '-y', '@modelcontextprotocol/server-github@2025.4.8'], { env, input: '' });
  assert.equal(cmd.code, 0, cmd.stderr);
  const c = JSON.parse(cmd.stdout);
  assert.equal(c.decision.registry_entry, null);
  assert.equal(c.decision.trust_facts.in_registry, false);
});

test('held (c6be628): with --audit-log the launch record masks a token in the server\'s argv', { timeout: 30_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const { env } = stateEnv();
  const dir = makeTempDir('adv17-audit');
  const log = path.join(dir, 'audit.log');
  const token = newGithubToken();
  const r = await runInCell(['--audit-log', log], ['/bin/sh', '-c', 'exit 0', 'sh', token], { env, input: '' });
  assert.equal(r.code, 0, r.stderr);
  const text = readFileSync(log, 'utf8');
  assert.match(text, /"event":"launch"|"launch"/);
  assert.ok(!text.includes(token), 'the token reached the audit log');
});
