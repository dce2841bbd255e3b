// Adversary pass adv14 (session 14): the cache entry owner check
// (src/source/cache_entry_owner.cc CheckOwnedBelow: the path from the cache
// root to package.json and to the program only; owner the caller or root,
// no group/other write, no link).
//
// Finding:
//   low    an install script (in its cell, which writes its package's
//          directory as the caller) that leaves the package's other code
//          world-writable (`chmod -R 777 build`, common in native-module
//          builds) passes: only the program's path is checked, and the
//          program require()s the rest. Any local user then changes that
//          code, which the next run loads (an allow run: with no cell).
// Held: the same script's chmod 666 of the program itself is refused.

import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { startPackageRegistry } from './lib/npm_registry.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const ID = `${process.pid}${Date.now() % 100000}`;

async function installAndRerun(t, name, postinstall) {
  const reg = await startPackageRegistry([{ name, version: '1.0.0',
    manifest: { bin: { srv: 'index.js' }, scripts: { postinstall } },
    files: { 'index.js': '#!/usr/bin/env node\nrequire("./build/lib.js");\n', 'build/lib.js': 'process.stderr.write("ADV14-LIB-LOADED\\n");\n' }, exec: ['index.js'] }]);
  t.after(() => reg.close());
  const home = makeTempDir('adv14-owner');
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'),
    npm_config_registry: reg.url, npm_config_update_notifier: 'false' };
  const first = await runMcpcell(['run', '--isolate', `npx://${name}@1.0.0`], { input: '', env, guardMs: 55_000 });
  const again = await runMcpcell(['run', '--isolate', `npx://${name}@1.0.0`], { input: '', env, guardMs: 30_000 });
  return { first, again, home };
}

test('adv14: an install script that makes the package\'s required code world-writable (chmod -R 777 build) leaves an entry every later run loads', {
  timeout: 90_000,
}, async (t) => {
  const name = `adv14-owner-lib-${ID}`;
  const { first, again, home } = await installAndRerun(t, name, 'chmod -R 777 build');
  t.diagnostic(`first: exit ${first.code}; again: exit ${again.code}`);
  // Fixed: the install takes group and other write away from what its
  // scripts left (npx_install.cc WritableByOwnerOnly); the code then loads
  // as the owner's alone.
  const pkg = path.join(home, '.cache', 'mcpcell', 'npx', `${name}@1.0.0`, 'node_modules', name);
  for (const rel of ['build', 'build/lib.js']) {
    const mode = statSync(path.join(pkg, rel)).mode;
    assert.equal(mode & 0o022, 0, `${rel} is writable by its group or others (mode ${mode.toString(8)})`);
  }
});

test('adv14 held: an install script\'s chmod 666 of the program itself does not outlive the install', { timeout: 90_000 }, async (t) => {
  const name = `adv14-owner-bin-${ID}`;
  const { home } = await installAndRerun(t, name, 'chmod 666 index.js');
  const mode = statSync(path.join(home, '.cache', 'mcpcell', 'npx', `${name}@1.0.0`, 'node_modules', name, 'index.js')).mode;
  assert.equal(mode & 0o022, 0, `index.js is writable by its group or others (mode ${mode.toString(8)})`);
});
