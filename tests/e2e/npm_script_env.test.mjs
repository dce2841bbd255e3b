// The variables an install script sees in its cell are the ones npm itself
// sets (source/lifecycle.h NodeEnv, source/npm_user_agent.h): the same
// package installed twice, once by mcpcell (scripts in cells) and once by
// the host's own npm running its scripts, each script recording what it
// was given; npm's answer is the reference.
//
// Run as root and as mcpcell-test:
//   cd tests/e2e && MCPCELL_BIN=../../build/mcpcell E2E_REQUIRE_ISOLATION=1 node --test npm_script_env.test.mjs

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsEnv, scriptsHome, startPackageRegistry } from './lib/npm_registry.mjs';
import { makeWritableDir, removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');

after(removeTempDirs);
const { home, install } = scriptsHome('e2e-script-env-home');

const KEYS = ['npm_package_resolved', 'npm_package_integrity', 'npm_package_optional', 'npm_package_dev',
  'npm_package_peer', 'npm_package_dev_optional', 'npm_package_json', 'npm_package_name', 'npm_package_version',
  'npm_lifecycle_event', 'npm_config_user_agent'];

/** Records the variables above (null: unset) in env.json, in the package's directory. */
const dump = `const fs = require('fs');
const keys = ${JSON.stringify(KEYS)};
fs.writeFileSync('env.json', JSON.stringify(Object.fromEntries(keys.map((k) => [k, process.env[k] ?? null]))));
`;

test('an install script in its cell sees what npm\'s own rebuild gives it: resolved, integrity, optional, dev, user agent', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-env-top-${id}`;
  const dep = `e2e-env-dep-${id}`;
  const opt = `e2e-env-opt-${id}`;
  const reg = await startPackageRegistry([
    { name: dep, version: '1.0.0', manifest: { scripts: { install: 'node dump.js' } }, files: { 'dump.js': dump } },
    { name: opt, version: '2.0.0', manifest: { scripts: { postinstall: 'node dump.js' } }, files: { 'dump.js': dump } },
    {
      name: top, version: '1.0.0',
      manifest: { bin: { [top]: 'server.js' }, dependencies: { [dep]: '1.0.0' }, optionalDependencies: { [opt]: '2.0.0' } },
      files: { 'server.js': '#!/usr/bin/env node\n' },
    },
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);

  // The host's npm, scripts on, in a prefix of its own, from the same registry.
  const prefix = makeWritableDir('script-env-npm');
  // Not execFileSync: the registry answers from this very process.
  await promisify(execFile)('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--omit=dev', `${top}@1.0.0`], {
    env: { ...scriptsEnv(home()), npm_config_registry: reg.url }, timeout: 60_000,
  });
  for (const name of [dep, opt]) {
    const ours = JSON.parse(readFileSync(path.join(installDir, 'node_modules', name, 'env.json'), 'utf8'));
    const npms = JSON.parse(readFileSync(path.join(prefix, 'node_modules', name, 'env.json'), 'utf8'));
    t.diagnostic(`${name}: ${JSON.stringify(ours)}`);
    // npm_package_json names the package's directory, which differs between the two installs.
    for (const env of [ours, npms]) env.npm_package_json = env.npm_package_json?.replace(/^.*\/node_modules\//, '.../');
    assert.deepEqual(ours, npms, `${name}: the cell's variables differ from npm's`);
  }
});
