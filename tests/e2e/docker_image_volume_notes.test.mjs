// adv17's image-author case: a docker:// image whose config lists many
// VOLUMEs makes mcpcell write one note per VOLUME before the container
// exists (adv17 used 4600, 1.15 MB; 1000 are ~250 KB, four times a pipe's
// 64 KiB, and build in a quarter of the time). The stderr copy (cell/stderr_log.h) runs from the start,
// so the notes never fill its pipe and block mcpcell on its own stderr. In
// the docker step of scripts/test.sh (the podman service up).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { MCPCELL_BIN } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

function stateDir() {
  const state = makeTempDir('adv17-state');
  chmodSync(state, 0o700);
  return state;
}

/** Runs `argv` under `timeout -s KILL secs` (so nothing outlives the test); {code, stderr, ms}. */
function runBounded(argv, { env, secs }) {
  const start = Date.now();
  const r = spawnSync('timeout', ['-s', 'KILL', String(secs), ...argv], {
    env, input: '', encoding: 'buffer', maxBuffer: 64 << 20, timeout: (secs + 10) * 1000,
  });
  return { code: r.status, signal: r.signal, stderr: r.stderr ? r.stderr.toString('utf8') : '', ms: Date.now() - start };
}

test('a docker:// image with 1000 VOLUMEs does not hang the launch (its notes are written before the cell exists)', {
  timeout: 240_000,
}, async (t) => {
  const sock = (process.env.CONTAINER_HOST ?? 'unix:///run/podman/podman.sock').replace(/^unix:\/\//, '');
  // Under scripts/test.sh's docker step, as root, the service and the image
  // are there: missing is a failure. Its docker-group user's pass cannot
  // reach podman's root socket (podman.test.mjs runs in the root pass only).
  const skip = (why) => {
    if (process.env.MCPCELL_E2E_BACKEND === 'docker' && process.getuid() === 0) assert.fail(why);
    return t.skip(process.getuid() === 0 ? why : `${why}; podman's API socket is root's`);
  };
  if (spawnSync('podman', ['--version']).status !== 0) return skip('no podman');
  const ping = spawnSync('curl', ['-s', '--max-time', '5', '--unix-socket', sock, 'http://d/_ping'], { encoding: 'utf8' });
  if (ping.stdout.trim() !== 'OK') return skip(`no podman service on ${sock} (podman system service unix://${sock})`);
  if (spawnSync('podman', ['image', 'exists', 'docker.io/library/mcpcell-base:1']).status !== 0) {
    return skip('no mcpcell-base:1 image (scripts/docker.sh)');
  }
  const dir = makeTempDir('adv17-image');
  const vols = Array.from({ length: 1000 }, (_, i) => `/v${String(i).padStart(5, '0')}_${'p'.repeat(180)}`);
  const lines = [];
  for (let i = 0; i < vols.length; i += 50) lines.push('VOLUME ' + vols.slice(i, i + 50).join(' '));
  writeFileSync(path.join(dir, 'Containerfile'), `FROM docker.io/library/mcpcell-base:1\n${lines.join('\n')}\nLABEL adv17=1\n`);
  const tag = 'localhost/adv17/many-volumes:1';
  const built = spawnSync('timeout', ['-s', 'KILL', '150', 'podman', 'build', '-q', '-t', tag, dir], { encoding: 'utf8' });
  assert.equal(built.status, 0, `podman build failed: ${built.stderr}`);
  try {
    const env = { ...process.env, XDG_STATE_HOME: stateDir(), CONTAINER_HOST: `unix://${sock}` };
    const r = runBounded([MCPCELL_BIN, 'run', '--isolate=podman', '--relay=off', `docker://${tag}`, '--', '/bin/true'],
      { env, secs: 40 });
    // Before the fix (adv17): killed after 40 s, 182 bytes of stderr; now 127 (the image has no /bin/true).
    assert.ok(r.code !== null && r.code !== 137, `exit ${r.code}/${r.signal} after ${r.ms} ms, ${r.stderr.length} bytes of stderr`);
    assert.match(r.stderr, /image VOLUME \/v00999_/);
  } finally {
    spawnSync('podman', ['rmi', '-f', tag]);
  }
});
