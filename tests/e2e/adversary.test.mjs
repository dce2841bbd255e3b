// Attacks from the adversary pass on issue 10's fixes (docs/ATTACKS.md). A
// test marked { todo: 'issue 10: ...' } demonstrates a weakness that today's
// main still has: it reports without failing CI until the fix lands.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { CELL_PROXY_PORT, egressFlags, startStorySites, writeProfile } from './lib/egress.mjs';
import { EXIT, runInCell, runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { E2E_DIR, MCPCELL_BIN, NODE_BIN } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const DOCKER = process.env.MCPCELL_E2E_BACKEND === 'docker';
const DOCKER_USER = process.env.MCPCELL_DOCKER_TEST_USER ?? 'mcpcell-docker';
const OTHER_USER = 'mcpcell-test';

function uidOf(user) {
  const r = spawnSync('id', ['-u', user], { encoding: 'utf8' });
  return r.status === 0 ? Number(r.stdout.trim()) : null;
}

// A docker-group user's container cells claimed their host uid under
// /dev/shm/mcpcell-ids-UID. /dev/shm is world-writable and sticky: any local
// user could create that name first, and mcpcell then refused every container
// cell of the victim until root cleared it. The claims now live in the
// user's own $XDG_RUNTIME_DIR or ~/.local/state (cell_ids.cc); the squat
// below must change nothing.
test('a local user who squats /dev/shm/mcpcell-ids-<victim uid> does not stop the victim\'s container cells',
  { timeout: 90_000 }, async (t) => {
    if (!DOCKER) return t.skip('needs MCPCELL_E2E_BACKEND=docker (a container cell claims a uid)');
    if (process.getuid() !== 0) return t.skip('switches between two host users: runs in the root pass');
    const victim = uidOf(DOCKER_USER);
    const attacker = uidOf(OTHER_USER);
    if (victim === null || attacker === null) return t.skip(`needs users ${DOCKER_USER} and ${OTHER_USER}`);
    const dir = `/dev/shm/mcpcell-ids-${victim}`;
    if (existsSync(dir)) {
      if (statSync(dir).uid === victim && readdirSync(dir).length > 0) {
        return t.skip(`${dir} holds live claims of ${DOCKER_USER} (another run): not touched`);
      }
      spawnSync('rmdir', [dir]);
    }
    const squat = spawnSync('runuser', ['-u', OTHER_USER, '--', 'mkdir', '-m', '0700', dir], { encoding: 'utf8' });
    assert.equal(squat.status, 0, `the attacker could not create ${dir}: ${squat.stderr}`);
    t.after(() => spawnSync('rmdir', [dir]));
    const rm = spawnSync('runuser', ['-u', DOCKER_USER, '--', 'rmdir', dir], { encoding: 'utf8' });
    assert.notEqual(rm.status, 0, 'control: the victim cannot remove the squatted directory (sticky /dev/shm)');
    const run = spawnSync('runuser', ['-u', DOCKER_USER, '--', 'env', '-i', 'PATH=/usr/bin:/bin', MCPCELL_BIN,
      'run', '--isolate=docker', '--', '/bin/sh', '-c', 'echo up'], { encoding: 'utf8', input: '', timeout: 80_000 });
    assert.doesNotMatch(run.stderr, /check the cell id directory/, 'the squatter refused the victim\'s cell');
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, 'up\n');
  });

// The npx cache (~/.cache/mcpcell/npx or $XDG_CACHE_HOME/mcpcell/npx) holds
// code mcpcell later runs in other cells. Only the running package's own
// directory is bound read-only; a cell given --write on a directory above
// the cache ($HOME, ~/.cache, $XDG_CACHE_HOME) rewrites another package's
// bin, and the next `mcpcell run npx://that@version` runs the attacker's
// code with that server's network, secrets and writes. Same class as the
// audit log and policy files (issue 10 item 10): a --write dir that holds
// the cache is refused (launch_plan.cc, CheckRecordsOutOfReach). The files are made writable by any uid so
// that the root pass (per-run cell uids) models what the normal user has
// anyway (the cell runs as the caller's uid and the cache is the caller's).
test('a cell with --write above the npx cache cannot rewrite a cached package another run executes',
  { timeout: 120_000 }, async () => {
    const cacheHome = makeWritableDir('npx-poison');
    const pkg = path.join(cacheHome, 'mcpcell', 'npx', 'victim-srv@1.0.0', 'node_modules', 'victim-srv');
    mkdirSync(pkg, { recursive: true });
    // Below mcpcell/npx only: mcpcell refuses a package cache others can write.
    for (let d = pkg; d !== path.join(cacheHome, 'mcpcell', 'npx'); d = path.dirname(d)) chmodSync(d, 0o777);
    chmodSync(path.join(cacheHome, 'mcpcell', 'npx'), 0o700);
    chmodSync(path.join(cacheHome, 'mcpcell'), 0o700);
    writeFileSync(path.join(pkg, 'package.json'), '{"name":"victim-srv","version":"1.0.0","bin":{"victim-srv":"cli.js"}}');
    const cli = path.join(pkg, 'cli.js');
    writeFileSync(cli, '#!/usr/bin/env node\nconsole.log("genuine");\n');
    chmodSync(cli, 0o777);
    chmodSync(path.join(pkg, 'package.json'), 0o666);
    const env = { ...process.env, XDG_CACHE_HOME: cacheHome };
    // What runs must be writable by no one else (cache_entry_owner.h): the
    // package is the caller's own for the runs of it, and writable by any
    // uid only while the hostile cell tries.
    const entryModes = (dirMode, fileMode) => {
      for (let d = pkg; d !== path.join(cacheHome, 'mcpcell', 'npx'); d = path.dirname(d)) chmodSync(d, dirMode);
      chmodSync(cli, fileMode);
      chmodSync(path.join(pkg, 'package.json'), fileMode);
    };
    entryModes(0o755, 0o644);
    const control = await runMcpcell(['run', 'npx://victim-srv@1.0.0'], { env, input: '' });
    assert.equal(control.stdout, 'genuine\n', `control: the cached package runs; stderr: ${control.stderr}`);
    entryModes(0o777, 0o666);
    const poison = 'console.log("POISONED by another cell");';
    const hostile = await runMcpcell(['run', '--write', cacheHome, '--', '/bin/sh', '-c',
      `printf '#!/usr/bin/env node\\n%s\\n' '${poison}' > "$1" && echo wrote`, 'sh', cli], { env, input: '' });
    assert.doesNotMatch(readFileSync(cli, 'utf8'), /POISONED/,
      `the cell rewrote the cached package (exit ${hostile.code}, stdout ${JSON.stringify(hostile.stdout)})`);
    assert.equal(hostile.code, EXIT.usage, `a --write dir holding the npx cache was accepted:\n${hostile.stderr}`);
    assert.match(hostile.stderr, /npx cache/, hostile.stderr);
    entryModes(0o755, 0o644);
    const victim = await runMcpcell(['run', 'npx://victim-srv@1.0.0'], { env, input: '' });
    assert.equal(victim.stdout, 'genuine\n', `the next run executed another cell's code; stderr: ${victim.stderr}`);
  });

// Narrower than the test above: a --write grant *inside* one of mcpcell's
// own directories. The secret rule cache holds a Vectorscan database the next
// run's supervisor deserializes outside every cell; its key and hash are
// public, so a cell that could write there (as the normal user a cell writes
// as the user) would choose those bytes. A grant of one npx package's
// directory would let a cell rewrite that server's code for its next run; one
// of the pin directory, approve its own rug pull. The adversary pass of
// 2026-11-28 got each of them past the first version of this check by running
// the cell under another XDG_CACHE_HOME, XDG_STATE_HOME or HOME than the
// later runs use, with --relay=off or pins off (the pin directory was checked
// only when this run pinned), or through a bind mount of the cache.
test('a cell may not be granted write access at or inside mcpcell\'s own directories, whatever this run\'s environment',
  { timeout: 120_000 }, async (t) => {
    const home = makeWritableDir('own-dirs-home');
    const elsewhere = makeWritableDir('own-dirs-elsewhere');
    const base = { ...process.env, HOME: home };
    delete base.XDG_CACHE_HOME;
    delete base.XDG_STATE_HOME;
    const cache = path.join(home, '.cache', 'mcpcell');
    const state = path.join(home, '.local', 'state', 'mcpcell');
    for (const d of ['secret-db', 'grant-scan', 'npx/victim-srv@1.0.0']) mkdirSync(path.join(cache, d), { recursive: true });
    mkdirSync(path.join(state, 'pins'), { recursive: true });
    const accountCache = path.join(os.userInfo().homedir, '.cache', 'mcpcell', 'secret-db');
    mkdirSync(accountCache, { recursive: true, mode: 0o700 });
    const cases = [
      ['the secret rule cache', path.join(cache, 'secret-db'), base, []],
      ['the grant scan cache', path.join(cache, 'grant-scan'), base, []],
      ['one npx package', path.join(cache, 'npx', 'victim-srv@1.0.0'), base, []],
      ['the pin directory', path.join(state, 'pins'), base, []],
      ['the state directory\'s parent', path.join(home, '.local', 'state'), base, []],
      ['the default secret rule cache, this run under another XDG_CACHE_HOME', path.join(cache, 'secret-db'),
        { ...base, XDG_CACHE_HOME: elsewhere }, []],
      // The account's own home (passwd), whatever $HOME this run has: mcpcell makes the directory anyway.
      ['the passwd home\'s cache, this run under another HOME', accountCache, { ...base, HOME: elsewhere }, []],
      ['the pin directory with --relay=off', path.join(state, 'pins'), base, ['--relay=off']],
      ['the default pin directory, this run under another XDG_STATE_HOME', path.join(state, 'pins'),
        { ...base, XDG_STATE_HOME: elsewhere }, []],
    ];
    for (const [what, dir, env, extra] of cases) {
      const r = await runMcpcell(['run', '--isolate', ...extra, '--write', dir, '--dry-run', '--', '/bin/true'], { env, input: '' });
      assert.equal(r.code, EXIT.usage, `${what}: --write ${dir} was accepted:\n${r.stderr}`);
      // (mcpcell's state directory of any account is a credential location too, refused by that name first.)
      assert.match(r.stderr, /Grant a directory outside it|Keep the file outside|refusing to expose .*mcpcell's state directory/,
        `${what}: ${r.stderr}`);
    }
    // The cache under another name: a host bind mount of it (root only: mount(2)).
    if (process.getuid() !== 0) return t.diagnostic('the bind-mount alias case runs in the root pass');
    const alias = makeWritableDir('own-dirs-alias');
    const mounted = spawnSync('mount', ['--bind', cache, alias]);
    if (mounted.status !== 0) return t.diagnostic(`mount --bind failed: ${mounted.stderr}`);
    try {
      const r = await runMcpcell(['run', '--isolate', '--write', path.join(alias, 'npx', 'victim-srv@1.0.0'), '--dry-run',
        '--', '/bin/true'], { env: base, input: '' });
      assert.equal(r.code, EXIT.usage, `a package directory through a bind mount of the cache was accepted:\n${r.stderr}`);
      assert.match(r.stderr, /\(as /, r.stderr);
    } finally {
      spawnSync('umount', [alias]);
    }
  });

// The credential scan of a granted directory is bounded (200,000 entries,
// credentials.cc) and, past the bound, goes on unmasked with a warning. The
// scan is breadth-first, so a directory near the top with 200,001 entries
// uses up the budget before anything one level deeper is looked at. Those
// entries cost a hostile server nothing: a cell given --write ~/work writes
// them once, and every later run that is given --read ~ (of this server or
// any other) sees ~/projects/app/.env unmasked. Fail open, where the rest of
// mcpcell fails closed: past the budget the grant is refused, naming the
// directory (spec_builder.cc, MaskBeneath).
test('a granted directory flooded with entries by an earlier cell still has its credential files masked',
  { timeout: 120_000 }, async () => {
    const home = makeTempDir('cred-flood');
    const work = path.join(home, 'work');
    const app = path.join(home, 'projects', 'app');
    mkdirSync(work);
    mkdirSync(app, { recursive: true });
    chmodSync(path.join(home, 'projects'), 0o755);
    chmodSync(app, 0o755);
    const env = path.join(app, '.env');
    writeFileSync(env, 'API_TOKEN=flooded-but-secret\n');
    chmodSync(env, 0o644);
    const readEnv = ['run', '--relay=off', '--read', home, '--', '/bin/sh', '-c', 'cat "$1"; echo "[exit $?]"', 'sh', env];
    const control = await runMcpcell(readEnv, { input: '' });
    assert.doesNotMatch(control.stdout, /flooded-but-secret/, 'control: without the flood the .env is masked');
    assert.equal(control.stdout, '[exit 0]\n', `control: the .env reads as empty (/dev/null over it); stderr: ${control.stderr}`);
    // What the hostile cell would have written into its --write dir: 200,001 empty files.
    const flood = spawnSync('sh', ['-c', 'seq 1 200001 | xargs touch'], { cwd: work, encoding: 'utf8' });
    assert.equal(flood.status, 0, flood.stderr);
    const r = await runMcpcell(readEnv, { input: '' });
    assert.doesNotMatch(r.stdout, /flooded-but-secret/,
      `the cell read the .env past the exhausted scan; mcpcell said:\n${r.stderr}`);
    assert.equal(r.code, EXIT.usage, `a grant too large to check was not refused:\n${r.stderr}`);
    assert.match(r.stderr, /too large to check for credentials/, r.stderr);
    assert.match(r.stderr, /--force-credentials/, r.stderr);
  });

// A container run writes its seccomp profile to /dev/shm/mcpcell-seccomp-
// <pid>-XXXXXX (docker_cell.cc, ProfileFile) and unlinks it in a destructor.
// A supervisor killed before that destructor leaves the file; the reapers
// (the next run, `mcpcell gc`) know the stdio, secrets and egress
// directories of dead runs but not this file, so each such death leaks one
// (about 21 KB of tmpfs memory, seen on the test machine from a kill -9 at
// 21:52 that gc did not clear). Small, but it is memory outside every cell's
// limit that nothing ever gives back.
test('mcpcell gc removes the seccomp profile file a dead container run left in /dev/shm',
  { timeout: 60_000 }, async () => {
    const gone = spawnSync('true');
    const file = `/dev/shm/mcpcell-seccomp-${gone.pid}-adv${process.pid}`;
    writeFileSync(file, '{"defaultAction":"SCMP_ACT_ERRNO"}', { mode: 0o600 });
    try {
      const gc = await runMcpcell(['gc'], { input: '' });
      assert.equal(gc.code, 0, gc.stderr);
      assert.equal(existsSync(file), false, `gc left ${file} (its run, pid ${gone.pid}, is gone)`);
    } finally {
      spawnSync('rm', ['-f', file]);
    }
  });

// Request smuggling and target confusion through the plain-HTTP forwarder and
// CONNECT, sent raw from inside an allow-list cell (servers/raw_proxy_client.mjs).
// The forwarder re-frames every request it passes on (one request per
// connection, its own Host, Connection: close), so a second request hidden
// in the first's framing must never reach a host the profile denies. Blocked
// on today's main; kept so a change to the parser or the framing shows here.
test('raw smuggling attempts through the egress proxy: the denied host hears nothing', { timeout: 200_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const sites = await startStorySites();
  t.after(() => sites.close());
  const W = `wiki.acmecorp.com:${sites.wiki.port}`;
  const E = `evil.example:${sites.evil.port}`;
  const cases = {
    te_and_cl: `POST http://${W}/te-cl HTTP/1.1\r\nHost: ${W}\r\nContent-Length: 60\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET http://${E}/smuggled HTTP/1.1\r\nHost: ${E}\r\n\r\n`,
    te_not_chunked: `POST http://${W}/te-x HTTP/1.1\r\nHost: ${W}\r\nContent-Length: 4\r\nTransfer-Encoding: xchunked\r\n\r\nAAAA`,
    two_lengths: `POST http://${W}/cl-cl HTTP/1.1\r\nHost: ${W}\r\nContent-Length: 4\r\nContent-Length: 40\r\n\r\nAAAA`,
    chunk_extension: `POST http://${W}/ext HTTP/1.1\r\nHost: ${W}\r\nTransfer-Encoding: chunked\r\n\r\n5;x="\r\nGET http://${E}/ext HTTP/1.1"\r\nhello\r\n0\r\n\r\n`,
    pipelined: `GET http://${W}/first HTTP/1.1\r\nHost: ${W}\r\n\r\nGET http://${E}/pipelined HTTP/1.1\r\nHost: ${E}\r\n\r\n`,
    second_host_header: `GET http://${W}/two-hosts HTTP/1.1\r\nHost: ${W}\r\nHost: ${E}\r\n\r\n`,
    connection_names_host: `GET http://${W}/conn-host HTTP/1.1\r\nHost: ${W}\r\nConnection: host, close\r\n\r\n`,
    at_after_query: `GET http://${W}?@${E}/q HTTP/1.1\r\nHost: ${W}\r\n\r\n`,
    at_after_backslash: `GET http://${W}\\@${E}/b HTTP/1.1\r\nHost: ${W}\r\n\r\n`,
    connect_absolute_form: `CONNECT http://${W}/ HTTP/1.1\r\nHost: ${E}\r\n\r\n`,
    connect_then_request_to_denied: `CONNECT ${W} HTTP/1.1\r\nHost: ${E}\r\n\r\nGET /x HTTP/1.1\r\nHost: ${E}\r\n\r\n`,
    mapped_v6_loopback: `CONNECT [::ffff:7f00:1]:${sites.evil.port} HTTP/1.1\r\n\r\n`,
    siit_v6_loopback: `CONNECT [::ffff:0:127.0.0.1]:${sites.evil.port} HTTP/1.1\r\n\r\n`,
    sixtofour_loopback: `CONNECT [2002:7f00:1::]:${sites.evil.port} HTTP/1.1\r\n\r\n`,
  };
  const dir = makeTempDir('smuggle');
  const profile = writeProfile(dir, sites.outbound);
  const client = path.join(E2E_DIR, 'servers', 'raw_proxy_client.mjs');
  const run = await runInCell(egressFlags({ profile, resolve: sites.resolve }),
    [NODE_BIN, client, JSON.stringify({ port: CELL_PROXY_PORT, cases })], { guardMs: 170_000 });
  const replies = new Map(run.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)).map((r) => [r.name, r]));
  assert.equal(replies.size, Object.keys(cases).length, `the client did not finish; stderr:\n${run.stderr}`);
  for (const name of ['te_and_cl', 'te_not_chunked', 'two_lengths', 'at_after_backslash', 'connect_absolute_form',
    'connect_then_request_to_denied']) {
    assert.equal(replies.get(name).status, 400, `${name}: ${JSON.stringify(replies.get(name))}`);
  }
  for (const name of ['mapped_v6_loopback', 'siit_v6_loopback', 'sixtofour_loopback']) {
    assert.equal(replies.get(name).status, 403, `${name}: ${JSON.stringify(replies.get(name))}`);
  }
  assert.deepEqual(sites.evil.requests, [], 'the denied host got a request');
  assert.deepEqual(sites.evil.contacts, [], 'the denied host was contacted');
  const wikiPaths = sites.wiki.requests.map((r) => r.url);
  for (const p of ['/smuggled', '/pipelined', '/x']) assert.ok(!wikiPaths.includes(p), `${p} reached the allowed host too: ${wikiPaths}`);
  for (const r of sites.wiki.requests) assert.equal(r.host, W, `a forwarded request carried Host ${r.host}`);
});
