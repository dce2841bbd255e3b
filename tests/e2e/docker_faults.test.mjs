// kill -9 of mcpcell during container create (issue 9): the engine made the
// container, mcpcell never heard its id. `mcpcell gc` must still find and
// remove it (by its supervisor label) with everything else of the run.
//
// The phase is observed, not guessed: mcpcell talks to the engine through a
// relay of this test on a unix socket (DOCKER_HOST), which forwards the
// create request and holds back every answer after it; once the engine lists
// the new container, mcpcell is killed.
//
// Needs a running engine and root, like docker.test.mjs: scripts/test.sh's
// e2e-docker step sets MCPCELL_E2E_BACKEND=docker (a missing engine then
// FAILS); plain e2e runs skip with that reason.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { engineRequest } from './lib/engine.mjs';
import { pollUntilClean } from './lib/host.mjs';
import { runMcpcell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN, nodeCellArgs } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const SOCKET = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
const ENABLED = process.env.MCPCELL_E2E_BACKEND === 'docker';

async function needEngine(t) {
  if (!ENABLED) {
    t.skip('container cells: set MCPCELL_E2E_BACKEND=docker with a running dockerd (scripts/test.sh e2e-docker step)');
    return false;
  }
  let r;
  try {
    r = await engineRequest(SOCKET, 'GET', '/_ping');
  } catch (e) {
    assert.fail(`MCPCELL_E2E_BACKEND=docker but no engine answers on ${SOCKET}: ${e.message} (start it: scripts/docker.sh)`);
  }
  assert.equal(r.status, 200, `engine /_ping answered ${r.status}`);
  return true;
}

/** `promise`, or a rejection with `why()` after `ms` (a hang guard, not a measurement). */
async function withGuard(promise, ms, why) {
  let timer;
  const guard = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(why())), ms)));
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/** Containers (all states) labelled with supervisor `pid`. */
async function containersOf(pid) {
  const filters = encodeURIComponent(JSON.stringify({ label: [`io.mcpcell.supervisor=${pid}`] }));
  const r = await engineRequest(SOCKET, 'GET', `/containers/json?all=1&filters=${filters}`);
  assert.equal(r.status, 200, `engine list failed: ${JSON.stringify(r.body)}`);
  return r.body;
}

/**
 * A relay on a unix socket of ours to the engine's socket. On a connection
 * that carries a container create request, everything the engine answers
 * after it is held back (never delivered). `createSeen` resolves when one
 * was forwarded. Returns { socketPath, createSeen, close() }.
 */
async function startHoldingRelay(dir) {
  const socketPath = path.join(dir, 'engine.sock');
  let seen;
  const createSeen = new Promise((resolve) => (seen = resolve));
  const conns = new Set();
  const server = net.createServer((client) => {
    const engine = net.connect(SOCKET);
    conns.add(client).add(engine);
    let holding = false;
    client.on('data', (d) => {
      if (/^POST \S*\/containers\/create/m.test(d.toString('latin1'))) {
        holding = true;
        seen();
      }
      engine.write(d);
    });
    engine.on('data', (d) => {
      if (!holding) client.write(d);
    });
    for (const [a, b] of [[client, engine], [engine, client]]) {
      a.on('error', () => b.destroy());
      a.on('close', () => b.destroy());
    }
  });
  await new Promise((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath,
    createSeen,
    close: () => new Promise((resolve) => {
      for (const c of conns) c.destroy();
      server.close(() => resolve());
    }),
  };
}

/** /dev/shm and /tmp entries a run of supervisor `pid` makes (mcpcell-<kind>-<pid>-*). */
function runDirsOf(pid) {
  const mine = (n) => /^mcpcell-[a-z]+-/.test(n) && n.includes(`-${pid}-`);
  return [
    ...readdirSync('/dev/shm').filter(mine).map((n) => `/dev/shm/${n}`),
    ...readdirSync(os.tmpdir()).filter(mine).map((n) => path.join(os.tmpdir(), n)),
  ];
}

test('docker: kill -9 of mcpcell during container create leaves nothing once gc ran', { timeout: 120_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const relay = await startHoldingRelay(makeTempDir('engine-relay'));
  t.after(() => relay.close());
  const argv = ['run', '--isolate=docker', ...nodeCellArgs(), '--', '/bin/sh', '-c', 'exec sleep 600'];
  const child = spawn(MCPCELL_BIN, argv, {
    env: { ...process.env, DOCKER_HOST: `unix://${relay.socketPath}` },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.on('error', () => {});
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  t.after(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));

  // The phase: the engine has the container, mcpcell has not heard its id.
  await withGuard(relay.createSeen, 60_000, () => `mcpcell never asked to create a container; stderr:\n${stderr}`);
  let created = [];
  for (let i = 0; i < 200 && created.length === 0; i++) {
    created = await containersOf(child.pid);
    if (created.length === 0) await sleep(100);
  }
  assert.equal(created.length, 1, 'the engine created the container (the phase under test)');
  child.kill('SIGKILL');
  assert.deepEqual(await exited, { code: null, signal: 'SIGKILL' });
  await relay.close();

  // The control: kill -9 gave mcpcell no chance to remove what it made.
  assert.equal((await containersOf(child.pid)).length, 1, 'the orphaned container is there before gc');
  const gc = await runMcpcell(['gc']);
  assert.equal(gc.code, 0, gc.stderr);
  const left = await pollUntilClean(() => (runDirsOf(child.pid).length ? `left: ${runDirsOf(child.pid).join(' ')}` : null));
  assert.equal(left, null, `${left}; gc stderr:\n${gc.stderr}`);
  assert.deepEqual(await containersOf(child.pid), [], `gc left the container; its stderr:\n${gc.stderr}`);
});
