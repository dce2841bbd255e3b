// Adversary pass adv21: the in-place script run's lock is taken on a
// directory that may no longer be the install.
//
// Finding (LOW): RunScriptsInPlace (src/source/npx_install.cc:510-535)
// opens the published install by name, waits for its flock, and then works
// on the install by name again (InstallScriptsRan(cache_dir), HandleScripts
// (cache_dir), rename(cache_dir, aside)). adv19's fix made a failed run
// rename the install aside and remove it: a second launch that waited for
// the lock meanwhile wakes holding a lock on that removed directory, and
// goes on with whatever the name holds now. With nothing there it fails
// (it writes its record into a directory that is gone: "record that the
// install scripts ran in ...: No such file or directory") where it should
// have installed afresh. With a fresh install published there meanwhile by
// a third launch (an --install-scripts=skip one, or `mcpcell install
// --install-scripts=skip`), it runs the scripts in that install without
// holding that install's lock — beside a fourth launch that does hold it,
// each with a disk budget of its own — and when they fail it renames and
// removes that install from under the third launch's running server.
//   Reproduce: install x@1.0.0 with --install-scripts=skip; x's postinstall
//   succeeds in a fresh install (.install-*) and fails in place after a
//   signal; launch A (`mcpcell install npx://x@1.0.0`) runs it in place,
//   launch B (the same) blocks on the flock; let A's script fail: A removes
//   the install, and B fails instead of installing x afresh.
//   Suggested fix: after the flock, check that the name still leads to the
//   directory locked (fstat of the fd against lstat of the name, both
//   st_dev/st_ino), and start over (EnsureNpxPackage from the top: a fresh
//   install under its own .install-PID-X) when it does not; work on the
//   install through the locked fd (openat) rather than its name.
//
// Bounded: one package, three short launches; the in-place script waits at
// most 120 s for the test's signal.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsHome, scriptsEnv, startPackageRegistry } from './lib/npm_registry.mjs';
import { installWithoutScripts, startInstall, until } from './lib/npx_in_place.mjs';
import { removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');
const h = scriptsHome('e2e-adv21-stale');
after(removeTempDirs);

test('adv21: a launch that waited for a failed in-place run\'s lock installs afresh instead of working on the removed install', {
  timeout: 240_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv21-stale-${id}`;
  const installDir = path.join(h.home(), '.cache', 'mcpcell', 'npx', `${top}@1.0.0`);
  const go = path.join(installDir, 'node_modules', top, 'go');
  // In a fresh install (INIT_CWD .../.install-PID-X) the script succeeds;
  // in place it waits for the test's signal, then fails.
  const postinstall = `case "$INIT_CWD" in */.install-*) exit 0;; esac; echo adv21-in-place; i=0; `
    + `while [ ! -e ${go} ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; exit 1`;
  const reg = await startPackageRegistry([{
    name: top, version: '1.0.0',
    manifest: { bin: { [top]: 'server.js' }, scripts: { postinstall } },
    files: { 'server.js': '#!/usr/bin/env node\n' },
  }]);
  t.after(() => reg.close());
  const env = { ...scriptsEnv(h.home()), npm_config_registry: reg.url };
  const source = `npx://${top}@1.0.0`;
  await installWithoutScripts(source, env);
  const ino = statSync(installDir).ino;

  const a = startInstall(source, env, 180_000);
  assert.ok(await until(() => a.stderr().includes('adv21-in-place')), `A runs the scripts in place (test setup): ${a.stderr().slice(-600)}`);
  const b = startInstall(source, env, 180_000);
  // B waits for A's flock on the install (a blocked FLOCK on its inode).
  const blocked = () => readFileSync('/proc/locks', 'utf8').split('\n').some((l) => l.includes('-> FLOCK') && l.includes(`:${ino} `));
  assert.ok(await until(blocked), `B blocks on the install's lock (test setup); B said: ${b.stderr().slice(-400)}`);
  writeFileSync(go, '1');
  const ra = await a.done;
  assert.notEqual(ra.code, 0, 'A\'s in-place run failed (test setup)');
  assert.match(ra.stderr, /the install was removed/, `A removed the install (test setup): ${ra.stderr.slice(-600)}`);
  const rb = await b.done;
  t.diagnostic(`B: exit ${rb.code}\n${rb.stderr.split('\n').slice(-4).join('\n')}`);
  assert.equal(rb.code, 0, `B worked on the install A removed instead of installing afresh: ${rb.stderr.slice(-600)}`);
  assert.ok(existsSync(path.join(installDir, '.mcpcell-install-scripts.json')), 'B\'s install is published with its scripts run');
});
