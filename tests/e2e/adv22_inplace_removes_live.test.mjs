// Adversary pass adv22: a failed in-place script run removes the install a
// running server was launched from.
//
// Finding (LOW; availability): RunScriptsInPlace (src/source/npx_install.cc
// :528-535 for a killed run's mark, :546-555 for a failed run) undoes the
// run with RemoveInstallAside (src/source/npx_cache.cc:81), which moves the
// install aside and deletes it. Servers do not hold the install's flock, and
// unlike `mcpcell cache prune` (cli/cache_cmd.cc: "kept in use by a running
// cell", from the cells' records) nothing here asks whether a running cell
// binds it. A server launched with --install-scripts=skip (or by an older
// mcpcell, or before a killed run) keeps running from a directory that is
// then deleted under it: its next lazy require() fails, a restart reinstalls.
// Any launch with the default --install-scripts=cell whose scripts fail (a
// native build without network is enough) does it; a package can do it on
// purpose by failing its postinstall.
//   Reproduce: `mcpcell install --install-scripts=skip npx://x@1.0.0` whose
//   postinstall is `exit 3`; `mcpcell run --install-scripts=skip
//   npx://x@1.0.0` (stays up); `mcpcell install npx://x@1.0.0`: "the install
//   was removed", and the running server's node_modules is gone.
//   Suggested fix: before RemoveInstallAside in RunScriptsInPlace, check the
//   running cells' records as prune does (ListNpxCache's in_use) and, when a
//   cell binds the install, leave it (report the failure, keep no record) —
//   or run in-place scripts in a copy published over the old name on
//   success only (adv21's first suggestion), which never touches what runs.
//
// Bounded: one server, one failing install; the home is removed after.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsHome, scriptsEnv, startPackageRegistry } from './lib/npm_registry.mjs';
import { installWithoutScripts, until } from './lib/npx_in_place.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');
const h = scriptsHome('e2e-adv22-live');
after(removeTempDirs);

const SERVER = '#!/usr/bin/env node\nprocess.stderr.write("adv22-server-" + "up\\n");\nprocess.stdin.resume();\n';

test('adv22: a failed in-place script run does not remove the install a running server uses', {
  timeout: 240_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv22-live-${id}`;
  const reg = await startPackageRegistry([{
    name: top, version: '1.0.0',
    manifest: { bin: { [top]: 'server.js' }, scripts: { postinstall: 'exit 3' } },
    files: { 'server.js': SERVER },
  }]);
  t.after(() => reg.close());
  const env = { ...scriptsEnv(h.home()), npm_config_registry: reg.url };
  const source = `npx://${top}@1.0.0`;
  await installWithoutScripts(source, env);
  const pkgJson = path.join(h.home(), '.cache', 'mcpcell', 'npx', `${top}@1.0.0`, 'node_modules', top, 'package.json');
  // The running server: launched without scripts, its stdin held open.
  const server = spawn(MCPCELL_BIN, ['run', '--relay=off', '--install-scripts=skip', source],
    { env, cwd: '/', stdio: ['pipe', 'ignore', 'pipe'] });
  let serverErr = '';
  server.stderr.setEncoding('utf8').on('data', (d) => { serverErr += d; });
  const closed = new Promise((resolve) => server.on('close', resolve));
  t.after(async () => { server.kill('SIGTERM'); await closed; });
  assert.ok(await until(() => serverErr.includes('adv22-server-up'), 600), `the server runs (test setup): ${serverErr.slice(-600)}`);
  const listed = await runMcpcell(['cache', 'list'], { env });
  t.diagnostic((listed.stdout + listed.stderr).split('\n').filter((l) => l.includes('checked') || l.includes(top)).join(' | '));
  const failed = await runMcpcell(['install', source], { env, guardMs: 120_000 });
  t.diagnostic(`in-place run: exit ${failed.code}: ${failed.stderr.split('\n').filter((l) => l.includes('remove')).join(' | ')}`);
  assert.ok(server.exitCode === null, 'the server still runs (test setup)');
  assert.ok(existsSync(pkgJson), 'the failed in-place run removed the install the running server was launched from');
});
