// --dry-run prints the CellSpec as JSON on stdout and runs nothing.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

/** The first object (depth-first) that has all of `keys`: the CellSpec may sit inside a wrapper. */
function findWithKeys(value, keys) {
  if (value && typeof value === 'object') {
    if (!Array.isArray(value) && keys.every((k) => k in value)) return value;
    for (const v of Object.values(value)) {
      const found = findWithKeys(v, keys);
      if (found) return found;
    }
  }
  return null;
}

test('--dry-run: valid JSON with argv, mounts and limits; the command does not run', { timeout: 60_000 }, async () => {
  const readDir = makeTempDir('dry-read');
  const writeDir = makeWritableDir('dry-write');
  const ranMarker = path.join(writeDir, 'ran');
  const command = ['/bin/sh', '-c', `touch ${ranMarker}`];
  // No isolation probe here: planning a cell needs no kernel support.
  const r = await runMcpcell(['run', '--isolate', '--dry-run', '--read', readDir, '--write', writeDir,
    '--memory', '256m', '--pids', '128', '--cpus', '1', '--timeout', '30s', '--', ...command]);
  assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
  let doc;
  try {
    doc = JSON.parse(r.stdout);
  } catch (e) {
    assert.fail(`stdout is not JSON (${e.message}):\n${r.stdout}`);
  }
  const spec = findWithKeys(doc, ['argv', 'mounts', 'limits']);
  assert.ok(spec, `no object with argv, mounts and limits in:\n${r.stdout}`);
  assert.deepEqual(spec.argv, command);

  const bind = (source) => spec.mounts.find((m) => m.kind === 'bind' && m.source === source);
  assert.equal(bind(readDir)?.writable, false, `no read-only bind of ${readDir}`);
  assert.equal(bind(readDir)?.target, readDir);
  assert.equal(bind(writeDir)?.writable, true, `no writable bind of ${writeDir}`);

  assert.equal(spec.limits.memory_bytes.value, 256 * 1024 * 1024);
  assert.equal(spec.limits.pids.value, 128);
  assert.equal(spec.limits.cpus.value, 1);
  assert.equal(spec.limits.timeout_ms, 30_000);
  assert.equal(spec.network.mode, 'none');
  assert.equal(spec.user.uid, 1000);

  assert.equal(existsSync(ranMarker), false, '--dry-run ran the command');
});

test('--dry-run HOST:CELL puts the host dir at the cell path', { timeout: 60_000 }, async () => {
  const readDir = makeTempDir('dry-map');
  const r = await runMcpcell(['run', '--isolate', '--dry-run', '--read', `${readDir}:/data`, '--', '/bin/true']);
  assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
  const spec = findWithKeys(JSON.parse(r.stdout), ['argv', 'mounts', 'limits']);
  const m = spec.mounts.find((x) => x.source === readDir);
  assert.ok(m, `no mount of ${readDir}`);
  assert.equal(m.target, '/data');
  assert.equal(m.writable, false);
});
