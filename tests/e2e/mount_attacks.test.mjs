// The filesystem findings of issue 10 (items 3, 5, 6, 10) and issue 18 item
// 14, as attacks on the real binary in native cells. Every secret is
// world-readable on the host, so when a cell cannot read one it is the cell
// (a mask, a refusal, a narrow auto-mount) that stopped it, not permissions;
// each test also reads a control file the cell must see.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, linkSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';

import { EXIT, runInCell, runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN, NODE_BIN, nodeCellArgs } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const isRoot = process.getuid() === 0;

/** Writes `text` at dir/rel, every directory on the way 0755 and the file 0644 (any uid may read). */
function put(dir, rel, text) {
  const file = path.join(dir, rel);
  let d = dir;
  for (const part of path.dirname(rel).split('/').filter((p) => p && p !== '.')) {
    d = path.join(d, part);
    mkdirSync(d, { recursive: true });
    chmodSync(d, 0o755);
  }
  writeFileSync(file, text);
  chmodSync(file, 0o644);
  return file;
}

/** `cat` of each file inside a cell, one "name=content" line each (empty when unreadable or masked). */
function catScript(files) {
  return files.map((f) => `printf '%s=' '${f}'; cat '${f}' 2>/dev/null | head -c 200; echo`).join('; ');
}

/** The secrets a fake home holds, by path below it: issue 10.6 and 18.14 names, at depths. */
const HOME_SECRETS = [
  '.config/gh/hosts.yml', '.config/gcloud/credentials.db', '.local/share/keyrings/login.keyring',
  'work/sub/proj/.git-credentials', 'work/sub/proj/.npmrc', 'work/sub/proj/.ssh/id_ed25519',
  'work/a/b/c/d/.env', 'work/app/.env.production', 'work/deep/er/.aws/credentials', '.pgpass', '.env',
  '.bash_history', '.zsh_history', '.python_history', '.node_repl_history', '.psql_history', '.mysql_history',
  '.lesshst', '.netrc', '.git-credentials', '.npmrc', '.pypirc', '.docker/config.json', '.kube/config',
  '.azure/accessTokens.json', '.password-store/bank.gpg', '.gnupg/private-keys-v1.d/k.key',
];

function fakeHome() {
  const home = makeTempDir('home');
  for (const rel of HOME_SECRETS) put(home, rel, `SECRET-${rel}`);
  put(home, 'work/sub/proj/readme.txt', 'CONTROL-readme');
  put(home, '.config/app/settings.json', 'CONTROL-settings');
  return home;
}

function leaked(stdout) {
  return stdout.split('\n').filter((l) => l.includes('SECRET-'));
}

test('credentials below a granted directory are masked at any depth; ~ in the flags is the caller\'s home (10.6, 18.14)',
  { timeout: 120_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const home = fakeHome();
    const env = { ...process.env, HOME: home };
    const files = [...HOME_SECRETS, 'work/sub/proj/readme.txt', '.config/app/settings.json'].map((r) => path.join(home, r));
    // The tilde is given literally, as a client config passes it (no shell).
    for (const grants of [['--read', '~'], ['--read', '~/.config', '--read', '~/.local/share', '--read', '~/work']]) {
      const r = await runInCell(grants, ['/bin/sh', '-c', catScript(files)], { env, input: '' });
      assert.equal(r.code, 0, `cell with ${grants.join(' ')} failed: ${r.stderr}`);
      assert.deepEqual(leaked(r.stdout), [], `${grants.join(' ')} exposed credentials:\n${r.stdout}`);
      assert.match(r.stdout, /readme\.txt=CONTROL-readme/, `the control file is not readable:\n${r.stdout}\n${r.stderr}`);
      if (grants.includes('~/.config')) assert.match(r.stdout, /settings\.json=CONTROL-settings/);
    }
    // Naming one directly is refused, and the message names it.
    const named = await runInCell(['--read', '~/work/sub/proj/.npmrc'], ['/bin/true'], { env, input: '' });
    assert.equal(named.code, EXIT.usage, named.stderr);
    assert.match(named.stderr, /npm token/);
  });

test('auto-mounts are narrow and masked: ~/.local/bin, pipx links, a project binary, a host socket (10.5)',
  { timeout: 120_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const home = fakeHome();
    const env = { ...process.env, HOME: home };
    const keyring = path.join(home, '.local/share/keyrings/login.keyring');
    // A script installed straight into ~/.local/bin.
    const direct = put(home, '.local/bin/srv', `#!/bin/sh\necho RAN-direct\n${catScript([keyring])}\nls ${home}/.local\n`);
    chmodSync(direct, 0o755);
    // The pipx/uv layout: ~/.local/bin/tool -> ../share/pipx/venvs/tool/bin/tool.
    put(home, '.local/share/pipx/venvs/tool/pyvenv.cfg', 'home = /usr/bin\n');
    const venvTool = put(home, '.local/share/pipx/venvs/tool/bin/tool', `#!/bin/sh\necho RAN-pipx\n${catScript([keyring])}\n`);
    chmodSync(venvTool, 0o755);
    symlinkSync('../share/pipx/venvs/tool/bin/tool', path.join(home, '.local/bin/tool'));
    for (const [exe, ran] of [[direct, 'RAN-direct'], [path.join(home, '.local/bin/tool'), 'RAN-pipx']]) {
      const r = await runMcpcell(['run', '--isolate', '--', exe], { env, input: '' });
      assert.equal(r.code, 0, `${exe}: ${r.stderr}`);
      assert.match(r.stdout, new RegExp(ran), r.stderr);
      assert.deepEqual(leaked(r.stdout), [], `${exe} saw the keyring:\n${r.stdout}`);
    }

    // A server inside a project: package.json makes it the package; its
    // .npmrc, a nested .ssh and a host service's socket must not reach it.
    const proj = makeTempDir('proj');
    put(proj, 'package.json', '{"name":"p","type":"module"}');
    put(proj, '.npmrc', '//registry.npmjs.org/:_authToken=SECRET-npmrc');
    put(proj, 'deploy/.ssh/id_ed25519', 'SECRET-deploy-key');
    put(proj, 'data.txt', 'CONTROL-data');
    const sock = path.join(proj, 'svc.sock');
    const server = net.createServer((c) => c.end('SECRET-socket-answer\n'));
    await new Promise((resolve) => server.listen(sock, resolve));
    chmodSync(sock, 0o777);
    try {
      const script = put(proj, 'server.mjs', `
import { readFileSync } from 'node:fs';
import net from 'node:net';
const read = (f) => { try { return readFileSync(f, 'utf8'); } catch (e) { return e.code; } };
console.log('npmrc=' + read(${JSON.stringify(path.join(proj, '.npmrc'))}));
console.log('key=' + read(${JSON.stringify(path.join(proj, 'deploy/.ssh/id_ed25519'))}));
console.log('data=' + read(${JSON.stringify(path.join(proj, 'data.txt'))}));
const c = net.connect(${JSON.stringify(sock)});
c.on('data', (d) => { console.log('socket=' + d); c.destroy(); });
c.on('error', (e) => console.log('socket=' + e.code));
`);
      const r = await runMcpcell(['run', '--isolate', '--', NODE_BIN, script], { env, input: '' });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /data=CONTROL-data/, `the package itself is not mounted:\n${r.stdout}\n${r.stderr}`);
      assert.deepEqual(leaked(r.stdout), [], `the project server reached a secret:\n${r.stdout}`);
      assert.match(r.stdout, /socket=E/, r.stdout);
    } finally {
      server.close();
    }
  });

test('a server under another user\'s home does not get that home (10.5)', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) {
    t.skip('needs root: a normal user cannot create a home directory under /home');
    return;
  }
  const other = path.join('/home', `e2e-other-${process.pid}`);
  mkdirSync(other, { mode: 0o755 });
  chmodSync(other, 0o755);
  try {
    put(other, '.ssh/id_ed25519', 'SECRET-other-ssh');
    put(other, '.aws/credentials', 'SECRET-other-aws');
    const srv = put(other, 'srv.sh', `#!/bin/sh\necho RAN\n${catScript([`${other}/.ssh/id_ed25519`, `${other}/.aws/credentials`])}\nls -a ${other}\n`);
    chmodSync(srv, 0o755);
    const r = await runMcpcell(['run', '--isolate', '--', srv], { input: '' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /RAN/);
    assert.deepEqual(leaked(r.stdout), [], `a server in ${other} read its credentials:\n${r.stdout}`);
  } finally {
    rmSync(other, { recursive: true, force: true });
  }
});

test('--audit-log, --policy and --permission-profile inside a writable grant are refused (10.10)',
  { timeout: 60_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const rw = makeWritableDir('rw');
    const safe = makeTempDir('safe');
    const policy = put(rw, 'policy.json', JSON.stringify({ rules: [{ condition: 'untrusted_source', action: 'isolate' }] }));
    const profile = put(rw, 'profile.json', JSON.stringify({ network: { outbound: { insecure_allow_all: false } } }));
    symlinkSync(rw, path.join(safe, 'link'));
    linkSync(put(rw, 'old.jsonl', ''), path.join(safe, 'hardlinked.jsonl'));
    const cases = [
      ['--audit-log', path.join(rw, 'audit.jsonl')],
      ['--audit-log', path.join(safe, 'link', 'audit.jsonl')],   // a symlink outside leading in
      ['--audit-log', path.join(safe, 'hardlinked.jsonl'), 'hard links'],  // the same file inside the grant
      ['--policy', policy],
      ['--policy', path.join(safe, 'link', 'policy.json')],
      ['--permission-profile', profile],
      ['--permission-profile', path.join(safe, 'link', 'profile.json')],
      ['--secret', `TOKEN=${put(rw, 'token', 'SECRET-token')}`],  // the cell could re-point it at another file
    ];
    for (const [flag, file, why] of cases) {
      const r = await runMcpcell(['run', '--isolate', '--write', rw, flag, file, '--', '/bin/true'], { input: '' });
      assert.equal(r.code, EXIT.usage, `${flag} ${file} was accepted: ${r.stderr}`);
      const named = flag === '--secret' ? file.slice(file.indexOf('=') + 1) : file;
      assert.ok(r.stderr.includes(flag) && r.stderr.includes(named) && r.stderr.includes(why ?? rw),
        `the refusal must name ${flag}, ${file} and ${why ?? rw}:\n${r.stderr}`);
    }
    assert.ok(!existsSync(path.join(rw, 'audit.jsonl')), 'a refused audit log was created');
    // Outside the grant, and with a literal ~ (the caller's home), it is written.
    const r = await runMcpcell(['run', '--isolate', '--write', rw, '--audit-log', '~/audit.jsonl', '--', '/bin/true'],
      { env: { ...process.env, HOME: safe }, input: '' });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(path.join(safe, 'audit.jsonl')), '--audit-log ~/audit.jsonl was not written to $HOME');
  });

/** Runs a cell that flips dir/data between a directory and a symlink to `target`, `swaps` times. */
function startSwapper(dir, target, swaps) {
  const code = `
const fs = require('fs');
const data = ${JSON.stringify(path.join(dir, 'data'))}, real = ${JSON.stringify(path.join(dir, 'real'))};
const hold = new Int32Array(new SharedArrayBuffer(4));
for (let i = 0; i < ${swaps}; i++) {
  fs.renameSync(data, real); fs.symlinkSync(${JSON.stringify(target)}, data);
  Atomics.wait(hold, 0, 0, 2);
  fs.unlinkSync(data); fs.renameSync(real, data);
  Atomics.wait(hold, 0, 0, 2);
}
console.log('swapped');
`;
  const child = spawn(MCPCELL_BIN, ['run', '--isolate', ...nodeCellArgs(), '--write', dir, '--', NODE_BIN, '-e', code],
    { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const done = new Promise((resolve) => child.on('close', (c) => resolve({ code: c, out, err })));
  return { child, done };
}

test('a bind source swapped for a symlink between check and bind is refused, never followed (10.3)',
  { timeout: 300_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const home = makeTempDir('victim');
    put(home, '.ssh/config', 'SECRET-ssh-config');
    const target = path.join(home, '.ssh');
    const dir = makeWritableDir('shared');
    mkdirSync(path.join(dir, 'data'));
    chmodSync(path.join(dir, 'data'), 0o777);
    put(dir, 'data/readme', 'CONTROL-data');
    const swapper = startSwapper(dir, target, 2000);
    let running = true;
    swapper.done.then(() => (running = false));
    const tally = { sawTarget: 0, ranOnData: 0, refusedSwap: 0, refusedCredential: 0, missing: 0, other: [] };
    // Bounded: at most 400 launches, each waited for, while the swapper runs.
    for (let i = 0; i < 400 && running; i++) {
      const r = await runInCell(['--read', path.join(dir, 'data')],
        ['/bin/sh', '-c', `cat ${dir}/data/config ${dir}/data/readme 2>/dev/null`], { input: '' });
      if (r.stdout.includes('SECRET-')) tally.sawTarget++;
      else if (r.stdout.includes('CONTROL-data')) tally.ranOnData++;
      else if (/changed after mcpcell checked it/.test(r.stderr)) tally.refusedSwap++;
      else if (/SSH keys/.test(r.stderr)) tally.refusedCredential++;  // the symlink was there at lowering
      else if (/No such file/.test(r.stderr)) tally.missing++;  // caught mid-rename
      else tally.other.push(`${r.code}: ${r.stderr.split('\n').slice(-3).join(' / ')}`);
    }
    const sw = await swapper.done;  // bounded: 2000 swaps
    t.diagnostic(`race: ${JSON.stringify({ ...tally, other: tally.other.length })}`);
    assert.equal(sw.code, 0, `the swapping cell failed: ${sw.err}`);
    assert.equal(tally.sawTarget, 0, `a cell mounted the swapped-in ${target}: ${JSON.stringify(tally)}`);
    assert.deepEqual(tally.other.slice(0, 5), [], 'launches failed for another reason');
    assert.ok(tally.refusedSwap > 0,
      `the swap never landed between check and bind in ${JSON.stringify(tally)}: this run proved nothing`);
  });

// The walk that masks sockets could not list a directory the caller may
// enter but not read (0311 here; a root-owned 0711 directory in the
// adversary pass), so a listening socket in it was reachable from the cell.
// Such a directory is masked whole now. As root every directory can be
// listed, and the socket in it is masked like any other. Either way the
// cell connects to nothing, and still reads what else was granted.
test('a socket in a granted directory that cannot be listed is not reachable from the cell', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const grant = makeTempDir('unlistable');
  put(grant, 'data.txt', 'CONTROL-data');
  const locked = path.join(grant, 'locked');
  mkdirSync(locked);
  const sock = path.join(locked, 'door.sock');
  const server = net.createServer((c) => c.end('SECRET-socket-answer\n'));
  await new Promise((resolve) => server.listen(sock, resolve));
  chmodSync(sock, 0o777);
  chmodSync(locked, 0o311);
  try {
    const script = put(makeTempDir('unlistable-srv'), 'probe.mjs', `
import { readFileSync } from 'node:fs';
import net from 'node:net';
console.log('data=' + readFileSync(${JSON.stringify(path.join(grant, 'data.txt'))}, 'utf8'));
const c = net.connect(${JSON.stringify(sock)});
c.on('data', (d) => { console.log('socket=' + d); c.destroy(); });
c.on('error', (e) => console.log('socket=' + e.code));
`);
    const r = await runMcpcell(['run', '--isolate', '--read', grant, '--read', path.dirname(script), '--', NODE_BIN, script],
      { input: '' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /data=CONTROL-data/, r.stderr);
    assert.doesNotMatch(r.stdout, /SECRET-socket-answer/, `the cell reached the socket:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /socket=E/, r.stdout);
    if (!isRoot) {  // the directory itself is masked (root lists it and masks the socket instead)
      const dry = await runMcpcell(['run', '--isolate', '--read', grant, '--dry-run', '--', '/bin/true'], { input: '' });
      assert.equal(dry.code, 0, dry.stderr);
      const mounts = JSON.parse(dry.stdout).cell.mounts;
      assert.ok(mounts.some((m) => m.target === locked && m.kind === 'tmpfs' && m.why === 'masked'), JSON.stringify(mounts));
    }
  } finally {
    chmodSync(locked, 0o755);
    server.close();
  }
});
