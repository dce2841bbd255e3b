// Adversary pass adv6 against the install-script cells' command view
// (src/source/script_bins.h: every node_modules/.bin hidden, the nearest
// showing only the bins of the package's declared dependencies). The
// property attacked: a package's code never runs in the cell of a package
// that does not depend on it (there it could write that package's files).
// A test marked todo is a finding (it fails on 42fbd66).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsHome, startPackageRegistry } from './lib/npm_registry.mjs';
import { removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');

after(removeTempDirs);
const { install } = scriptsHome('e2e-adv6-home');

/** A "node" that marks the directory it runs in, then hands over to the real one. */
const shim = (tag) => `#!/bin/sh
echo "$PWD" > pwned-by-${tag} 2>/dev/null
exec /usr/bin/node "$@"
`;

// npm's run-script puts <dirname(package)>/node_modules/.bin on a script's
// PATH for every ancestor of the package (set-path.js walks up to /). For a
// scoped package <install>/node_modules/@s/v that includes
// <install>/node_modules/@s/node_modules/.bin — the directory of a package
// named "@s/node_modules", a valid name (the "node_modules" ban is for the
// whole name), which any package in the tree can put there with an alias
// dependency ("@s/node_modules": "npm:payload@1.0.0"). script_bins.cc's
// CollectBinDirs looks for .bin only in node_modules directories, so this one
// is not hidden: a payload's .bin/node runs as "node" in the cell of every
// package of scope @s that has an install script ("node install.js" is the
// common one), where that package's directory is writable.
test('an alias named "@scope/node_modules" does not put its .bin on the PATH of the scope\'s packages', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const scope = `@e2e-adv6-${id}`;
  const top = `e2e-adv6-sb-top-${id}`;
  const evil = `e2e-adv6-sb-evil-${id}`;
  const payload = `e2e-adv6-sb-payload-${id}`;
  const v = `${scope}/native`;
  const reg = await startPackageRegistry([
    { name: payload, version: '1.0.0', manifest: {}, files: { '.bin/node': shim(payload), '.bin/node-gyp': shim(payload) }, exec: ['.bin/node', '.bin/node-gyp'] },
    // Depends on nothing of v's and has no script: only an alias.
    { name: evil, version: '1.0.0', manifest: { dependencies: { [`${scope}/node_modules`]: `npm:${payload}@1.0.0` } } },
    { name: v, version: '1.0.0', manifest: { scripts: { install: 'node build.js' } }, files: { 'build.js': 'require("fs").writeFileSync("built", "1");\n' } },
    { name: top, version: '1.0.0', manifest: { bin: { [top]: 'server.js' }, dependencies: { [evil]: '1.0.0', [v]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const planted = path.join(installDir, 'node_modules', scope, 'node_modules', '.bin', 'node');
  assert.ok(existsSync(planted), `npm did not install the alias where the attack needs it:\n${r.stderr}`);
  const vDir = path.join(installDir, 'node_modules', scope, 'native');
  assert.ok(existsSync(path.join(vDir, 'built')), `${v}'s install script did not run:\n${r.stderr}`);
  assert.ok(!existsSync(path.join(vDir, `pwned-by-${payload}`)), `${payload}'s "node" ran in ${v}'s cell and wrote its directory:\n${r.stderr}`);
});

// Held: the same alias outside a scope. "node_modules" is a banned name
// whole, so npm refuses to install <install>/node_modules/node_modules (the
// directory on every top-level package's PATH walk); the install fails or
// places nothing there, and no payload runs in another package's cell.
test('an alias named "node_modules" cannot put a .bin on the PATH of top-level packages', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv6-nm-top-${id}`;
  const evil = `e2e-adv6-nm-evil-${id}`;
  const payload = `e2e-adv6-nm-payload-${id}`;
  const v = `e2e-adv6-nm-v-${id}`;
  const reg = await startPackageRegistry([
    { name: payload, version: '1.0.0', manifest: {}, files: { '.bin/node': shim(payload) }, exec: ['.bin/node'] },
    { name: evil, version: '1.0.0', manifest: { dependencies: { node_modules: `npm:${payload}@1.0.0` } } },
    { name: v, version: '1.0.0', manifest: { scripts: { install: 'node build.js' } }, files: { 'build.js': 'require("fs").writeFileSync("built", "1");\n' } },
    { name: top, version: '1.0.0', manifest: { bin: { [top]: 'server.js' }, dependencies: { [evil]: '1.0.0', [v]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  const vDir = path.join(installDir, 'node_modules', v);
  assert.ok(!existsSync(path.join(vDir, `pwned-by-${payload}`)), `${payload}'s "node" ran in ${v}'s cell:\n${r.stderr}`);
  assert.ok(!existsSync(path.join(installDir, 'node_modules', 'node_modules', '.bin', 'node')), `npm installed a package as node_modules:\n${r.stderr}`);
});
