// Adversary pass adv21: a killed in-place script run is not undone.
//
// Finding (MEDIUM): adv19 found that each retry of a failed in-place script
// run (an install made with --install-scripts=skip, its scripts run at a
// later launch, in the published install) added up to the scripts' 1 GiB
// budget to the install, and fixed it by removing the install when the run
// fails (npx_install.cc RunScriptsInPlace). A run that does not fail but is
// killed (an MCP client's start-up timeout killing mcpcell, SIGKILL after
// its SIGTERM grace, the OOM killer, a logout) is not undone: the published
// install keeps what the scripts wrote, no record says they ran, and the
// next launch runs them again in place, on top, with a budget of its own
// counted from the disk's use at its start. A package whose script writes
// up to its budget and then waits for the client to give up adds ~1 GiB to
// ~/.cache/mcpcell/npx at every restart, without bound — adv19's finding by
// another road. (The same half-written install is what a later
// --install-scripts=skip launch runs.)
//   Reproduce: `mcpcell install --install-scripts=skip npx://x@1.0.0` whose
//   postinstall is `head -c 16M /dev/zero > blob-$(date +%s%N); sleep 300`;
//   then twice `mcpcell install npx://x@1.0.0`, each SIGKILLed once its
//   script wrote: the install holds two blobs (32 MiB), and would hold N
//   after N launches.
//   Fault: src/source/npx_install.cc:510-535 (RunScriptsInPlace runs the
//   scripts in the published install itself; only a returned failure
//   removes it).
//   Suggested fix: run the scripts in a copy (or a fresh install) under
//   .install-PID-X and publish it over the old one when they succeed (the
//   sweep already removes a killed launch's .install-* dir); or leave a
//   marker in the install before the run, and have a launch that finds the
//   marker with no holder of the install's flock remove the install and
//   install afresh.
//
// Bounded: 16 MiB per attempt, two attempts, each killed as soon as its
// script has written; the home is removed after.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsHome, scriptsEnv, startPackageRegistry } from './lib/npm_registry.mjs';
import { blobsIn, installWithoutScripts, startInstall, until } from './lib/npx_in_place.mjs';
import { removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');
const h = scriptsHome('e2e-adv21-killed');
after(removeTempDirs);

/** Whether no process has `dir` as its working directory (the killed launch's cell is gone). */
function noProcessIn(dir) {
  const r = spawnSync('sh', ['-c', `for p in /proc/[0-9]*; do [ "$(readlink $p/cwd 2>/dev/null)" = "${dir}" ] && echo $p; done`],
    { encoding: 'utf8' });
  return r.stdout.trim() === '';
}

test('adv21: a killed in-place script run is undone, so retries do not pile up what the scripts wrote', {
  timeout: 240_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv21-killed-${id}`;
  // Printed by the script once it wrote: not in its command line, which npm's lifecycle echoes first.
  const marker = 'adv21-42-wrote';
  const reg = await startPackageRegistry([{
    name: top, version: '1.0.0',
    manifest: { bin: { [top]: 'server.js' }, scripts: {
      postinstall: 'head -c 16777216 /dev/zero > blob-$(date +%s%N) && echo adv21-$((6*7))-wrote && sleep 300' } },
    files: { 'server.js': '#!/usr/bin/env node\n' },
  }]);
  t.after(() => reg.close());
  const env = { ...scriptsEnv(h.home()), npm_config_registry: reg.url };
  const source = `npx://${top}@1.0.0`;
  await installWithoutScripts(source, env);
  const installDir = path.join(h.home(), '.cache', 'mcpcell', 'npx', `${top}@1.0.0`);
  const pkgDir = path.join(installDir, 'node_modules', top);
  const blobs = () => blobsIn(pkgDir);
  for (let attempt = 1; attempt <= 2; attempt++) {
    let sawMarker = false;
    const run = startInstall(source, env, 120_000, (text, child) => {
      if (!sawMarker && text.includes(marker)) { sawMarker = true; child.kill('SIGKILL'); }
    });
    const r = await run.done;
    assert.ok(sawMarker, `attempt ${attempt}: the script ran in place and wrote (test setup): ${r.stderr.slice(-800)}`);
    assert.ok(await until(() => noProcessIn(pkgDir), 100), `attempt ${attempt}: the killed launch's cell is gone (test setup)`);
    t.diagnostic(`attempt ${attempt} killed (${r.signal}); blobs now: ${blobs().length}`);
  }
  const du = spawnSync('du', ['-sm', installDir], { encoding: 'utf8' }).stdout.split('\t')[0];
  t.diagnostic(`install after two killed launches: ${du}`);
  assert.ok(blobs().length <= 1, `two killed in-place runs left ${blobs().length} blobs (${du} MiB) in the published install: each retry adds its budget`);
});
