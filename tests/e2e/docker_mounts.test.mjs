// The filesystem findings of issue 10 (items 5, 6) in container cells:
// docker (runc) and gVisor. The engine binds by path; mcpcell lowers the same
// grants, masks and narrow auto-mounts as for a native cell, and re-checks
// each bind source just before it asks the engine (docs/THREAT_MODEL.md,
// "Filesystem grants", says what is left). Runs only with
// MCPCELL_E2E_BACKEND=docker, where a missing engine fails instead of skipping.

import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const SOCKET = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
const ENABLED = process.env.MCPCELL_E2E_BACKEND === 'docker';
const GUARD_MS = 240_000;

function ping() {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: SOCKET, path: '/_ping' }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', reject);
    req.end();
  });
}

async function engineReady(t) {
  if (!ENABLED) {
    t.skip('container cells: set MCPCELL_E2E_BACKEND=docker with a running dockerd (scripts/test.sh e2e-docker step)');
    return false;
  }
  let status;
  try {
    status = await ping();
  } catch (e) {
    assert.fail(`MCPCELL_E2E_BACKEND=docker but no engine answers on ${SOCKET}: ${e.message}`);
  }
  assert.equal(status, 200);
  return true;
}

/** Writes `text` at dir/rel, readable by any uid (so only the cell can hide it). */
function put(dir, rel, text, mode = 0o644) {
  let d = dir;
  for (const part of path.dirname(rel).split('/').filter((p) => p && p !== '.')) {
    d = path.join(d, part);
    mkdirSync(d, { recursive: true });
    chmodSync(d, 0o755);
  }
  const file = path.join(dir, rel);
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

const SECRETS = ['.config/gh/hosts.yml', '.local/share/keyrings/login.keyring', 'work/sub/proj/.git-credentials',
  'work/sub/proj/.npmrc', 'work/a/b/c/.ssh/id_ed25519', 'work/app/.env', '.pgpass', '.bash_history', '.aws/credentials'];

function catScript(files) {
  return files.map((f) => `printf '%s=' '${f}'; cat '${f}' 2>/dev/null | head -c 200; echo`).join('; ');
}

for (const level of ['docker', 'gvisor']) {
  test(`${level} cell: credentials below a grant are masked at any depth, auto-mounts are narrow (10.5, 10.6)`,
    { timeout: 600_000 }, async (t) => {
      if (!(await engineReady(t))) return;
      const home = makeTempDir('dhome');
      for (const rel of SECRETS) put(home, rel, `SECRET-${rel}`);
      put(home, 'work/sub/proj/readme.txt', 'CONTROL-readme');
      const files = [...SECRETS, 'work/sub/proj/readme.txt'].map((r) => path.join(home, r));
      const env = { ...process.env, HOME: home };
      const r = await runMcpcell(['run', `--isolate=${level}`, '--read', '~', '--', '/bin/sh', '-c', catScript(files)],
        { env, input: '', guardMs: GUARD_MS });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /readme\.txt=CONTROL-readme/, `${r.stdout}\n${r.stderr}`);
      assert.deepEqual(r.stdout.split('\n').filter((l) => l.includes('SECRET-')), [],
        `--read ~ exposed credentials in a ${level} cell:\n${r.stdout}`);

      // The pipx layout: the venv is bound and the link recreated, never ~/.local.
      const keyring = path.join(home, '.local/share/keyrings/login.keyring');
      put(home, '.local/share/pipx/venvs/tool/pyvenv.cfg', 'home = /usr/bin\n');
      put(home, '.local/share/pipx/venvs/tool/bin/tool', `#!/bin/sh\necho RAN-pipx\n${catScript([keyring])}\n`, 0o755);
      mkdirSync(path.join(home, '.local/bin'), { recursive: true });
      chmodSync(path.join(home, '.local/bin'), 0o755);
      symlinkSync('../share/pipx/venvs/tool/bin/tool', path.join(home, '.local/bin/tool'));
      const tool = await runMcpcell(['run', `--isolate=${level}`, '--', path.join(home, '.local/bin/tool')],
        { env, input: '', guardMs: GUARD_MS });
      assert.equal(tool.code, 0, tool.stderr);
      assert.match(tool.stdout, /RAN-pipx/, tool.stderr);
      assert.doesNotMatch(tool.stdout, /SECRET-/, `the auto-mounted tool read the keyring in a ${level} cell`);
    });
}

test('docker cell run by root: a source another cell could swap is refused, the engine binds by path (10.3)',
  { timeout: 300_000 }, async (t) => {
    if (!(await engineReady(t))) return;
    if (process.getuid() !== 0) {
      t.skip('the check applies to root: a normal user\'s cells all write as that user (docs/THREAT_MODEL.md)');
      return;
    }
    // A --write dir of a root-started cell must be writable by the cells' per-run uids: here 0777.
    const shared = makeTempDir('dshared');
    chmodSync(shared, 0o777);
    put(shared, 'data/readme', 'CONTROL-data');
    const r = await runMcpcell(['run', '--isolate=docker', '--read', path.join(shared, 'data'), '--', '/bin/cat',
      path.join(shared, 'data/readme')], { input: '', guardMs: GUARD_MS });
    assert.notEqual(r.code, 0, `a swappable source was handed to the engine:\n${r.stdout}`);
    assert.match(r.stderr, /writable by the cells root starts/, r.stderr);
    assert.doesNotMatch(r.stdout, /CONTROL-data/);
    // The same file in a directory only root can change is bound.
    const closed = makeTempDir('dclosed');
    put(closed, 'data/readme', 'CONTROL-data');
    const ok = await runMcpcell(['run', '--isolate=docker', '--read', path.join(closed, 'data'), '--', '/bin/cat',
      path.join(closed, 'data/readme')], { input: '', guardMs: GUARD_MS });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /CONTROL-data/);
  });
