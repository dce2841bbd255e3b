// A new user's first hour (issue 18), end to end with the real binary, the
// real server-filesystem (installed by mcpcell from npm into a test-owned
// cache) and the real SDK client: nothing is lost in silence, every mistake
// gets a way forward, and the exit codes are the README's table.

import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { EXIT, resultText, runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

/** Generous: the first run installs server-filesystem from npm, later ones reuse the cache. */
const NPX_TIMEOUT_MS = 120_000;
const IS_ROOT = process.getuid() === 0;

// One npx cache for this file, owned by this run; world-traversable because
// the cell's uid is not ours when running as root.
const CACHE_HOME = makeTempDir('first-hour-xdg');

/** Where npm finds this machine's CAs (see policy.test.mjs: `env -i` drops NODE_EXTRA_CA_CERTS). */
function caEnv() {
  if (process.env.NODE_EXTRA_CA_CERTS) return { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS };
  const bundle = '/etc/ssl/certs/ca-certificates.crt';
  return existsSync(bundle) ? { NODE_EXTRA_CA_CERTS: bundle } : {};
}

function mcpcellEnv(extra = {}) {
  return { ...process.env, ...caEnv(), XDG_CACHE_HOME: CACHE_HOME, ...extra };
}

/** `mcpcell <args>` run from `cwd` (a client starts servers from wherever it likes). */
function runIn(cwd, args, options = {}) {
  const here = process.cwd();
  process.chdir(cwd);
  try {
    return runMcpcell(args, { env: mcpcellEnv(), ...options });
  } finally {
    process.chdir(here); // spawn() took the cwd synchronously
  }
}

/** The registry's filesystem server through mcpcell, as an MCP client starts it from `cwd`. */
async function connectFilesystem(t, cwd, args) {
  const transport = new StdioClientTransport({
    command: MCPCELL_BIN, args: ['run', 'filesystem', ...args], cwd, env: mcpcellEnv(), stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const client = new Client({ name: 'first-hour', version: '0' });
  t.after(() => client.close());
  try {
    await client.connect(transport);
  } catch (e) {
    assert.fail(`connect failed: ${e.message}\nmcpcell stderr:\n${stderr}`);
  }
  return { client, stderr: () => stderr };
}

function writePolicy(text) {
  const file = path.join(makeTempDir('first-hour-policy'), 'policy.json');
  writeReadableFile(file, text);
  return file;
}

const findMount = (doc, source) => doc.cell.mounts.find((m) => m.kind === 'bind' && m.source === source);

// Item 2: `cd ~/site && mcpcell run filesystem -- .` used to bind nothing; the
// server wrote into the cell's temporary home and the file was gone at exit.
test('filesystem -- . binds the caller\'s cwd: a file written there is on the host after exit', { timeout: NPX_TIMEOUT_MS }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const site = makeWritableDir('first-hour-site');
  const { client, stderr } = await connectFilesystem(t, site, ['--', '.']);
  const allowed = resultText(await client.callTool({ name: 'list_allowed_directories', arguments: {} }));
  assert.ok(allowed.includes(site), `the server was not given ${site} (it resolved "." in the cell): ${allowed}\n${stderr()}`);
  const wrote = await client.callTool({ name: 'write_file', arguments: { path: path.join(site, 'report.md'), content: 'kept' } });
  assert.equal(wrote.isError, undefined, resultText(wrote));
  await client.close();
  assert.equal(readFileSync(path.join(site, 'report.md'), 'utf8'), 'kept', 'the written file is not on the host');
});

test('a directory argument that does not exist is refused (exit 2) naming the path, before anything runs', { timeout: NPX_TIMEOUT_MS }, async () => {
  const missing = path.join(makeTempDir('first-hour-missing'), 'data');
  for (const extra of [['--dry-run'], []]) {
    const r = await runMcpcell(['run', 'filesystem', ...extra, '--', missing], { env: mcpcellEnv() });
    assert.equal(r.code, EXIT.usage, `run filesystem ${extra.join(' ')} -- ${missing}: exit ${r.code}\n${r.stderr}`);
    assert.ok(r.stderr.includes(missing) && /does not exist/.test(r.stderr), r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(existsSync(missing), false);
  }
  // Relative: resolved against the caller's cwd, and the message says so.
  const cwd = makeTempDir('first-hour-rel');
  const r = await runIn(cwd, ['run', 'filesystem', '--dry-run', '--', 'nope']);
  assert.equal(r.code, EXIT.usage, r.stderr);
  assert.ok(r.stderr.includes(path.join(cwd, 'nope')), r.stderr);
});

// Resolving relative arguments must not open a way around the credential
// refusal: "~/.ssh", a symlink to it, and "/" are refused as --write would be.
test('a directory argument that is a credential location (also via ~ or a symlink), / or the cell\'s own /tmp is refused', { timeout: 30_000 }, async () => {
  const home = makeTempDir('first-hour-home');
  mkdirSync(path.join(home, '.ssh'));
  const cwd = makeTempDir('first-hour-link');
  symlinkSync(path.join(home, '.ssh'), path.join(cwd, 'keys'));
  for (const arg of ['~/.ssh', 'keys', path.join(home, '.ssh', '..', '.ssh'), '/', '/tmp']) {
    const r = await runIn(cwd, ['run', 'filesystem', '--dry-run', '--', arg], { env: mcpcellEnv({ HOME: home }) });
    assert.equal(r.code, EXIT.usage, `-- ${arg}: exit ${r.code}\n${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /directory argument .*(refusing to expose|reserved for the cell|has its own \/tmp)/, r.stderr);
    assert.equal(r.stdout, '');
  }
});

// Item 4: an explicit --read narrows the registry's read-write default.
test('filesystem --read DIR -- DIR: DIR is read-only (dry-run and the real server agree)', { timeout: NPX_TIMEOUT_MS }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const dir = makeWritableDir('first-hour-ro');
  writeReadableFile(path.join(dir, 'in.txt'), 'readable');
  const dry = await runMcpcell(['run', 'filesystem', '--read', dir, '--dry-run', '--', dir], { env: mcpcellEnv() });
  assert.equal(dry.code, 0, dry.stderr);
  const doc = JSON.parse(dry.stdout);
  assert.equal(findMount(doc, dir)?.writable, false, `not read-only in the dry-run:\n${dry.stdout}`);
  assert.equal(doc.cell.mounts.filter((m) => m.source === dir).length, 1, 'bound twice');

  const { client, stderr } = await connectFilesystem(t, dir, ['--read', dir, '--', dir]);
  const read = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(dir, 'in.txt') } });
  assert.equal(resultText(read), 'readable', stderr());
  const wrote = await client.callTool({ name: 'write_file', arguments: { path: path.join(dir, 'out.txt'), content: 'x' } });
  assert.equal(wrote.isError, true, `write succeeded in a --read dir: ${resultText(wrote)}`);
  assert.equal(existsSync(path.join(dir, 'out.txt')), false);
});

// Item 10: the runtime's own "Cannot find module" told nothing about the cell.
test('a server script or command that is not in the cell: exit 127 naming the path and the unmounted cwd', { timeout: 30_000 }, async () => {
  const cwd = makeTempDir('first-hour-cwd');
  const script = await runIn(cwd, ['run', '--isolate', '--', 'node', 'nosuch.js']);
  assert.equal(script.code, EXIT.notFound, script.stderr);
  assert.ok(script.stderr.includes(path.join(cwd, 'nosuch.js')), script.stderr);
  assert.match(script.stderr, /current directory .* is not mounted/);
  const command = await runIn(cwd, ['run', '--isolate', '--', './nosuch']);
  assert.equal(command.code, EXIT.notFound, command.stderr);
  assert.ok(command.stderr.includes(path.join(cwd, 'nosuch')), command.stderr);
  // A relative argument that names a host file in the unmounted cwd names
  // nothing in the cell (the workdir became the cell's home): said, not silent.
  mkdirSync(path.join(cwd, 'data'));
  const rel = await runIn(cwd, ['run', '--isolate', '--', '/bin/ls', 'data']);
  assert.notEqual(rel.code, 0, 'ls found data/ in the cell');
  assert.match(rel.stderr, /argument 'data' names .* current directory .* is not mounted/, rel.stderr);
});

// Item 5: "--dry-run prints exactly what will be enforced", literally.
test('--dry-run names the backend the level selects, and prints no cell for a server that runs without one', { timeout: 30_000 }, async () => {
  for (const level of ['native', 'docker', 'podman', 'gvisor']) {
    const r = await runMcpcell(['run', `--isolate=${level}`, '--dry-run', '--', '/bin/true']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).cell.backend, level, `--isolate=${level}`);
  }
  const allow = writePolicy('{"rules":[{"condition":"always","action":"allow"}]}\n');
  const r = await runMcpcell(['run', '--policy', allow, '--dry-run', '--', '/bin/true']);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout);
  assert.equal(doc.decision.action, 'allow');
  assert.equal(doc.cell, null, 'a cell spec for a server that runs without a cell');
  assert.match(doc.runs, /WITHOUT a cell/);
});

// Item 6: explain takes what run takes; the deny names the rule once and
// blames the registry entry's directory arguments, not "flags".
test('policy explain takes run\'s arguments; the deny line names the rule once and what asked for the write', { timeout: NPX_TIMEOUT_MS }, async () => {
  const policy = writePolicy('{"rules":[{"condition":"requests_write","action":"deny"}]}\n');
  const site = makeTempDir('first-hour-explain');
  const explained = await runIn(site, ['policy', 'explain', 'filesystem', '--policy', policy, '--json', '--', '.']);
  assert.equal(explained.code, 0, explained.stderr);
  assert.equal(JSON.parse(explained.stdout).decision.action, 'deny');
  const narrowed = await runIn(site, ['policy', 'explain', 'filesystem', '--policy', policy, '--read', '.', '--json', '--', '.']);
  assert.equal(narrowed.code, 0, narrowed.stderr);
  assert.equal(JSON.parse(narrowed.stdout).decision.action, 'isolate', 'explain ignored --read');

  const run = await runIn(site, ['run', 'filesystem', '--policy', policy, '--', '.']);
  assert.equal(run.code, EXIT.denied, run.stderr);
  const line = run.stderr.split('\n').find((l) => l.includes('denied by'));
  assert.equal(line.split('rule 0').length - 1, 1, `the rule is named more than once: ${line}`);
  assert.match(line, /registry entry "filesystem"/);
  assert.doesNotMatch(line, /flags/);

  writeReadableFile(path.join(site, 'server.js'), '');
  const command = await runIn(site, ['policy', 'explain', '--', 'node', 'server.js']);
  assert.equal(command.code, 0, command.stderr);
  assert.match(command.stdout, /decision:\s+isolate/);
});

// Items 8 and 9.
test('unknown words are named with the nearest valid one; run --help shows usage, examples and exit codes', { timeout: 30_000 }, async () => {
  const cases = [
    [['runn'], /'runn'.*'run'/],
    [['run', '--isolat', '--', '/bin/true'], /'--isolat'.*'--isolate'/],
    [['version'], /'version'.*'--version'/],
    [['policy', 'explian'], /'explian'.*'explain'/],
  ];
  for (const [args, expected] of cases) {
    const r = await runMcpcell(args);
    assert.equal(r.code, EXIT.usage, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, expected, `${args.join(' ')}`);
  }
  const help = await runMcpcell(['run', '--help']);
  assert.equal(help.code, 0);
  for (const part of ['-- COMMAND [ARGS', '--isolate[=LEVEL]', 'Examples:', 'Exit codes:', '127']) {
    assert.ok(help.stderr.includes(part), `run --help lacks ${part}:\n${help.stderr}`);
  }
  const fetch = await runMcpcell(['run', 'fetch']);
  assert.equal(fetch.code, EXIT.usage, fetch.stderr);
  assert.doesNotMatch(fetch.stderr, /npx:\/\//, 'suggested an arbitrary npm package');
  assert.match(fetch.stderr, /registry list/);
  const typo = await runMcpcell(['run', 'filesytem', '--', '/tmp']);
  assert.equal(typo.code, EXIT.usage);
  assert.match(typo.stderr, /nearest: filesystem/);
});

// Item 7: one table, each row shown by a run that produces it.
test('exit codes are the README\'s table: each one, produced', { timeout: NPX_TIMEOUT_MS }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const dir = makeTempDir('first-hour-codes');
  const notExec = path.join(dir, 'not-executable');
  writeFileSync(notExec, '#!/bin/sh\n');
  chmodSync(notExec, 0o644);
  const deny = writePolicy('{"rules":[{"condition":"always","action":"deny"}]}\n');
  const cases = [
    ['bad flag value', EXIT.usage, ['run', '--isolate', '--memory', 'lots', '--', '/bin/true']],
    ['a target named twice', EXIT.usage, ['run', '--isolate', '--read', dir, '--write', dir, '--', '/bin/true']],
    ['engine unreachable', EXIT.isolationUnavailable, ['run', '--isolate=docker', '--', '/bin/true'],
      { DOCKER_HOST: `unix://${dir}/no-engine.sock` }],
    ['denied', EXIT.denied, ['run', '--policy', deny, '--', '/bin/true']],
    ['timeout', EXIT.timeout, ['run', '--isolate', '--timeout', '1s', '--', '/bin/sleep', '60']],
    ['package registry unreachable', EXIT.setupFailed, ['run', 'npx://@modelcontextprotocol/server-memory@2026.8.31'],
      { npm_config_registry: 'http://127.0.0.1:9/', npm_config_fetch_retries: '0', XDG_CACHE_HOME: makeTempDir('first-hour-empty-cache') }],
    ['not executable', EXIT.cannotExec, ['run', '--isolate', '--read', dir, '--', notExec]],
    ['not found', EXIT.notFound, ['run', '--isolate', '--', 'no-such-command-first-hour']],
  ];
  if (IS_ROOT) {
    // As root the cell's user is a host id of its own: a --write dir it cannot write is the user's to fix
    // (root's dirs are mounted as their owner's unless --idmap=off: idmap.test.mjs).
    cases.push(['--write dir the cell cannot write', EXIT.usage, ['run', '--isolate', '--idmap=off', '--write', dir, '--', '/bin/true']]);
  } else {
    t.diagnostic('--write permission row: only as root (unprivileged, the cell user is the caller and the kernel decides)');
  }
  for (const [what, code, args, env] of cases) {
    const r = await runMcpcell(args, { env: mcpcellEnv(env) });
    assert.equal(r.code, code, `${what}: mcpcell ${args.join(' ')} exited ${r.code}, expected ${code}\n${r.stderr}`);
    assert.ok(r.stderr.trim().length > 0, `${what}: no message`);
  }
});

// Item 15: default limits a cgroup cannot enforce (a normal user on cgroup v1
// without delegation) were two warnings per launch that contradicted doctor.
test('unenforced default limits: at most one warning per launch, saying what still holds', { timeout: 30_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await runMcpcell(['run', '--isolate', '--', '/bin/true']);
  assert.equal(r.code, 0, r.stderr);
  const warnings = r.stderr.split('\n').filter((l) => /warning: .*limit/.test(l));
  assert.ok(warnings.length <= 1, `more than one limits warning:\n${r.stderr}`);
  const doc = await runMcpcell(['doctor']);
  assert.doesNotMatch(doc.stdout + doc.stderr, /limits fall back to rlimits/, 'doctor claims a memory rlimit that does not exist');
  if (warnings.length === 0) {
    t.diagnostic('every default limit is enforced by a cgroup here (root, or a delegated cgroup): no warning to check');
    return;
  }
  assert.match(warnings[0], /RLIMIT_NPROC/);
  assert.match(warnings[0], /memory is not capped|pids limit/);
  assert.match(warnings[0], /mcpcell doctor/);
});

// Item 4, for a profile's grant: --read narrows a profile's write path too.
test('--read DIR narrows a permission profile\'s write of DIR: bound once, read-only', { timeout: 30_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const dir = makeWritableDir('first-hour-profile-rw');
  const profile = path.join(makeTempDir('first-hour-profile'), 'profile.json');
  writeReadableFile(profile, JSON.stringify({ write: [dir] }));
  const args = ['run', '--isolate', '--permission-profile', profile, '--read', dir];
  const dry = await runMcpcell([...args, '--dry-run', '--', '/bin/true']);
  assert.equal(dry.code, 0, dry.stderr);
  const mounts = JSON.parse(dry.stdout).cell.mounts.filter((m) => m.source === dir);
  assert.deepEqual(mounts.map((m) => m.writable), [false], dry.stdout);
  const r = await runMcpcell([...args, '--', '/bin/sh', '-c', `touch ${dir}/x`]);
  assert.notEqual(r.code, 0, 'the cell wrote into a directory narrowed to read-only');
  assert.ok(r.code < 122, `mcpcell refused instead of running: ${r.code}\n${r.stderr}`);
  assert.equal(existsSync(path.join(dir, 'x')), false);
});
