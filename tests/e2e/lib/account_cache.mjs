// The account's own mcpcell cache, as an allow run requires it: HOME the
// account's home and no XDG_CACHE_HOME (launch_plan.cc WhySourceIsSwappable).
// The adversary tests of allowed npx:// and uvx:// sources put entries there
// (an install's, or one faked as the public registry's) and remove them when
// the file is done: `after(removeCacheEntries)`.

import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { BASE_PATH } from './policy_run.mjs';
import { writeReadableFile } from './tmp.mjs';

export const ACCOUNT_HOME = os.userInfo().homedir;
export const ACCOUNT_CACHE = path.join(ACCOUNT_HOME, '.cache', 'mcpcell');

/** A tag for this run's package names and versions: no two runs share a cache entry. */
export const RUN_ID = `${process.pid}${Date.now() % 100000}`;

/** The environment of an allow run: BASE_PATH, the account's HOME, LANG, then `extra`. */
export const accountEnv = (extra = {}) => ({ PATH: BASE_PATH, HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', ...extra });

const entries = [];

/** The cache entry of `kind` ('npx', 'uvx') for name@version, removed by removeCacheEntries. */
export function cacheEntry(kind, name, version = '1.0.0') {
  const entry = path.join(ACCOUNT_CACHE, kind, `${name.replace('/', '+')}@${version}`);
  entries.push(entry);
  return entry;
}

/** Removes every entry cacheEntry named (for `after`). */
export function removeCacheEntries() {
  for (const entry of entries) rmSync(entry, { recursive: true, force: true });
}

/**
 * An npx:// entry of `name`@1.0.0 as an install from the public registry
 * leaves it: the package (bin `srv`: `indexJs`) and a package-lock.json whose
 * `resolved` names registry.npmjs.org. Returns the entry's path.
 */
export function fakePublicNpxEntry(name, indexJs) {
  const entry = cacheEntry('npx', name);
  const pkgDir = path.join(entry, 'node_modules', name);
  mkdirSync(pkgDir, { recursive: true });
  writeReadableFile(path.join(pkgDir, 'package.json'), JSON.stringify({ name, version: '1.0.0', bin: { srv: 'index.js' } }));
  writeReadableFile(path.join(pkgDir, 'index.js'), indexJs);
  writeReadableFile(path.join(entry, 'package-lock.json'), JSON.stringify({ name: 'x', lockfileVersion: 3, requires: true, packages: {
    '': { dependencies: { [name]: '1.0.0' } },
    [`node_modules/${name}`]: { version: '1.0.0', resolved: `https://registry.npmjs.org/${name}/-/${name}-1.0.0.tgz`, integrity: 'sha512-AA==' } } }));
  // The record a public install writes (src/source/install_origin.h): without
  // it an allow run is refused for that, before the check a test aims at.
  writeReadableFile(path.join(entry, '.mcpcell-origin.json'), JSON.stringify({ public: true, settings: 'the public registry\'s, checked at install' }));
  return entry;
}
