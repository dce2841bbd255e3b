// Adversary pass adv20: what a failed install leaves, with adv20_remove_tree's
// finding (RemoveTree cannot move a non-empty directory without the owner's
// write bit, so it never removes one two or more levels below the top when
// mcpcell runs as a normal user).
//
// Findings:
//   1. MEDIUM A package's install script makes its failed install stay on
//      the host's disk for good, and the scripts' disk budget (1 GiB per
//      install, script_cell.cc OverDiskBudget) stops bounding the disk: the
//      script writes what it likes under lib/ (up to the budget), runs
//      `chmod 0500 lib` and exits 1. The install fails, InstallIntoCache's
//      RemoveTree(.install-PID-X) empties what it can and leaves
//      .rm-N/lib/... (renameat2 of lib to the top needs write on lib:
//      EACCES), and no later sweep (next install, `mcpcell gc`) removes it
//      either. An MCP client restarts a server that fails to start, and each
//      launch installs again: every attempt leaves up to another 1 GiB (and
//      250,000 inodes) in ~/.cache/mcpcell/npx until the disk is full, with
//      `mcpcell gc` saying "N checked, 0 removed". (The same leftover, with
//      what the script wrote, stays behind an optional dependency whose
//      script failed: install_scripts.cc RemoveTree(p.dir), "removed" in its
//      record while its directory is still in the published install.)
//      Reproduce: as a normal user, `mcpcell install npx://x@1.0.0` whose
//      postinstall is `mkdir -p lib/d && head -c 1M /dev/zero > lib/d/blob
//      && chmod 0500 lib && exit 1`; the install fails and
//      ~/.cache/mcpcell/npx/.install-PID-X/.rm-0/lib/d/blob remains; a
//      second attempt leaves a second one.
//      Suggested fix: RemoveTree gives a directory it cannot move its owner's
//      bits first (MoveUp: on EACCES/EPERM, OwnerBitsBack(from, name) and
//      retry), see adv20_remove_tree.test.mjs; and count what a failed
//      install leaves against nothing (it is removed).

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { startPackageRegistry } from './lib/npm_registry.mjs';
import { removeTempDirs } from './lib/tmp.mjs';

const TEST_UID = 1001; // mcpcell-test
const TEST_GID = 1001;
const id = randomBytes(4).toString('hex');
const homes = [];
after(() => { for (const h of homes) spawnSync('rm', ['-rf', '--', h]); });
after(removeTempDirs);

function mcpcellAsUser(args, env, guardMs) {
  const child = spawn(MCPCELL_BIN, args, {
    env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'], uid: TEST_UID, gid: TEST_GID,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  return new Promise((resolve) => {
    const guard = setTimeout(() => child.kill('SIGKILL'), guardMs);
    child.on('close', (code) => { clearTimeout(guard); resolve({ code, stdout, stderr }); });
  });
}

test('adv20: a failed install whose script made a read-only directory leaves nothing in the npx cache', {
  timeout: 180_000,
}, async (t) => {
  if (process.getuid() !== 0) { t.skip('needs root to act as mcpcell-test'); return; }
  if (await skipWithoutCell(t)) return;
  const home = mkdtempSync('/var/tmp/e2e-adv20-fail-');
  homes.push(home);
  chmodSync(home, 0o755);
  chownSync(home, TEST_UID, TEST_GID);
  const top = `e2e-adv20-fail-${id}`;
  const reg = await startPackageRegistry([{
    name: top, version: '1.0.0',
    manifest: { bin: { [top]: 'server.js' }, scripts: {
      postinstall: 'mkdir -p lib/d && head -c 1048576 /dev/zero > lib/d/blob && chmod 0500 lib && exit 1' } },
    files: { 'server.js': '#!/usr/bin/env node\n' },
  }]);
  t.after(() => reg.close());
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', npm_config_update_notifier: 'false',
    npm_config_registry: reg.url, npm_config_cache: path.join(home, 'npm-cache') };
  const npx = path.join(home, '.cache', 'mcpcell', 'npx');
  for (let attempt = 1; attempt <= 2; attempt++) {
    const r = await mcpcellAsUser(['install', `npx://${top}@1.0.0`], env, 90_000);
    t.diagnostic(`attempt ${attempt}: exit ${r.code}\n${r.stderr.split('\n').slice(-4).join('\n')}`);
    assert.notEqual(r.code, 0, 'the install fails (its script exits 1) (test setup)');
    assert.match(r.stderr, /exited with status 1|failed in their cell/, 'the script ran and failed in its cell (test setup)');
  }
  const gc = spawnSync(MCPCELL_BIN, ['gc'], { uid: TEST_UID, gid: TEST_GID, env, encoding: 'utf8', timeout: 30_000 });
  t.diagnostic((gc.stdout + gc.stderr).split('\n').filter((l) => l.includes('npx')).join('\n'));
  const left = readdirSync(npx).filter((n) => n.startsWith('.install-') || n.startsWith('.npmrc-'));
  const blobs = spawnSync('find', [npx, '-name', 'blob'], { encoding: 'utf8' }).stdout.trim();
  assert.deepEqual(left, [], `failed installs left their directories (after \`mcpcell gc\` too):\n${blobs}`);
  assert.ok(!existsSync(path.join(npx, `${top}@1.0.0`)), 'nothing was published');
});
