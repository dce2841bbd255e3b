// Adversary pass adv21: adv19's removal of a failed in-place script run
// fails for a long package@version, and the retries pile up again.
//
// Finding (MEDIUM): RunScriptsInPlace (src/source/npx_install.cc:528-531)
// moves a failed in-place install aside before removing it, to
// `.install-<pid>-failed-<name>@<version>`: 22-24 bytes longer than the
// install's own name. npm allows a package name of 214 bytes and a version
// of 256 (semver's MAX_LENGTH; a prerelease tag of any letters), and the
// cache names the install `<name>@<version>`: a name and version whose
// install name is 233-255 bytes publish fine, but the aside name passes
// NAME_MAX (255), rename(2) fails with ENAMETOOLONG, and the failed install
// is neither moved nor removed (the `rename(...) == 0 && RemoveTree(aside)`
// condition is simply false; nothing is said). Every later launch runs the
// scripts in place again, each adding up to the scripts' 1 GiB budget to
// the published install: adv19's finding (each retry of a failed in-place
// run adds its budget) for any package that picks a long version, which
// its author or registry chooses (`npx://pkg` resolves to it).
// `mcpcell cache prune` fails the same way (npx_cache.cc:81,
// `.install-<pid>-pruned-<name>`), so the user cannot remove it with
// mcpcell either.
//   Reproduce: x@1.0.0-aaaa…a (install name 250 bytes) with a postinstall
//   `head -c 8M /dev/zero > blob-$(date +%s%N); exit 1`; `mcpcell install
//   --install-scripts=skip npx://x@V`, then `mcpcell install npx://x@V`
//   twice: both fail, the install stays and holds two blobs.
//   Suggested fix: a short aside name of the launch's own (mkdtemp
//   `.install-<pid>-XXXXXX`, then rename the install into it, or
//   renameat2 to `.install-<pid>-failed-<n>`) — never one derived from the
//   install's name; the same in RemoveCachedPackage. And say on stderr
//   when the install could not be removed.
//
// Bounded: 8 MiB per attempt, two attempts; the home is removed after.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsHome, scriptsEnv, startPackageRegistry } from './lib/npm_registry.mjs';
import { blobsIn, installWithoutScripts } from './lib/npx_in_place.mjs';
import { removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');
const h = scriptsHome('e2e-adv21-long');
after(removeTempDirs);

test('adv21: a failed in-place script run of a package with a long name@version is removed like any other', {
  timeout: 240_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv21-long-${id}`;
  // The install's name, `${top}@${version}`, is 250 bytes: under NAME_MAX,
  // its aside `.install-<pid>-failed-...` over it.
  const version = `1.0.0-${'a'.repeat(250 - top.length - 1 - 6)}`;
  assert.equal(`${top}@${version}`.length, 250);
  const reg = await startPackageRegistry([{
    name: top, version,
    manifest: { bin: { [top]: 'server.js' }, scripts: {
      postinstall: 'head -c 8388608 /dev/zero > blob-$(date +%s%N) && echo adv21-$((6*7))-wrote && exit 1' } },
    files: { 'server.js': '#!/usr/bin/env node\n' },
  }]);
  t.after(() => reg.close());
  const env = { ...scriptsEnv(h.home()), npm_config_registry: reg.url };
  const source = `npx://${top}@${version}`;
  await installWithoutScripts(source, env);
  const installDir = path.join(h.home(), '.cache', 'mcpcell', 'npx', `${top}@${version}`);
  assert.ok(existsSync(installDir), 'published under the long name (test setup)');
  const pkgDir = path.join(installDir, 'node_modules', top);
  const blobs = () => blobsIn(pkgDir);
  const said = [];
  for (let attempt = 1; attempt <= 2; attempt++) {
    const r = await runMcpcell(['install', source], { env, guardMs: 120_000 });
    assert.notEqual(r.code, 0, `attempt ${attempt}: the in-place script fails (test setup)`);
    assert.match(r.stderr, /adv21-42-wrote/, `attempt ${attempt}: the script ran (test setup): ${r.stderr.slice(-600)}`);
    said.push(/the install was removed/.test(r.stderr));
    t.diagnostic(`attempt ${attempt}: exit ${r.code}; "the install was removed": ${said.at(-1)}; blobs now ${blobs().length}`);
  }
  assert.ok(blobs().length <= 1, `two failed in-place runs left ${blobs().length} blobs in the published install (it was never removed)`);
  assert.ok(said[0], 'the first failed in-place run removed the install');
});
