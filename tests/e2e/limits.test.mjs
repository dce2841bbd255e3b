// Resource limits: wall-clock timeout, pids, memory. A requested limit the
// machine cannot enforce must be refused by mcpcell (never silently ignored);
// the test then skips with the reason mcpcell and `mcpcell doctor` give.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { doctor, EXIT, lines, runInCell, skipWithoutCell } from './lib/mcpcell.mjs';
import { NODE_BIN } from './lib/paths.mjs';

/**
 * When mcpcell refuses a requested limit as unenforceable here (122), skip
 * with its message and what doctor says; as root with E2E_REQUIRE_LIMITS=1
 * (scripts/test.sh sets it where cgroups are known to work) that is a failure.
 */
async function skipIfLimitUnavailable(t, r, what) {
  if (r.code !== EXIT.isolationUnavailable) return false;
  const d = await doctor();
  const cgroupChecks = (d.json?.checks ?? []).filter((c) => /cgroup/i.test(c.name))
    .map((c) => `${c.name}: ${c.status} ${c.value} ${c.detail}`.trim());
  const reason = `${what} cannot be enforced here: ${lines(r.stderr).join(' / ')}` +
    (d.json ? ` (doctor: ${cgroupChecks.join('; ') || 'no cgroup checks'})` : ` (${d.reason})`);
  if (process.env.E2E_REQUIRE_LIMITS === '1') assert.fail(`${reason} (E2E_REQUIRE_LIMITS=1)`);
  t.skip(reason);
  return true;
}

test('--timeout 2s on a server that never ends: exit 124', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await runInCell(['--timeout', '2s'], [NODE_BIN, '-e', 'setInterval(() => {}, 1000)']);
  assert.equal(r.code, EXIT.timeout, `stderr:\n${r.stderr}`);
  assert.equal(r.stdout, '');
});

// Spawns up to 200 sleepers (bounded), reports how many started, kills them.
const forkBomb = `
const { spawn } = require('child_process');
const N = 200; let ok = 0, failed = 0, settled = 0; const kids = [];
const finish = () => {
  if (++settled < N) return;
  for (const k of kids) { try { k.kill('SIGKILL'); } catch {} }
  console.log(JSON.stringify({ ok, failed }));
  process.exit(0);
};
for (let i = 0; i < N; i++) {
  let c;
  try { c = spawn('/bin/sleep', ['30']); } catch { failed++; finish(); continue; }
  c.on('spawn', () => { ok++; kids.push(c); finish(); });
  c.on('error', () => { failed++; finish(); });
}`;

test('--pids 32: a bounded fork bomb mostly fails', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await runInCell(['--pids', '32'], [NODE_BIN, '-e', forkBomb]);
  if (await skipIfLimitUnavailable(t, r, '--pids')) return;
  assert.equal(r.code, 0, `the fork-bomb script itself failed (exit ${r.code}); stderr:\n${r.stderr}`);
  const { ok, failed } = JSON.parse(r.stdout);
  assert.ok(ok < 200, `all ${ok} spawns succeeded under --pids 32`);
  assert.ok(failed > 0);
  assert.ok(ok <= 32, `${ok} sleepers started under --pids 32`);
});

// Allocates (and touches) 16 MiB at a time up to 512 MiB, printing progress.
const memoryHog = `
const held = [];
for (let mib = 16; mib <= 512; mib += 16) {
  held.push(Buffer.alloc(16 << 20, 1));
  process.stdout.write(mib + '\\n');
}
console.log('done');`;

test('--memory 64m: allocating 512 MiB is stopped', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  // Control: the same script allocates all 512 MiB when the limit allows it.
  const control = await runInCell(['--memory', '1g'], [NODE_BIN, '-e', memoryHog]);
  if (await skipIfLimitUnavailable(t, control, '--memory')) return;
  assert.equal(control.code, 0, `control run failed; stderr:\n${control.stderr}`);
  assert.equal(lines(control.stdout).at(-1), 'done');

  const r = await runInCell(['--memory', '64m'], [NODE_BIN, '-e', memoryHog]);
  if (await skipIfLimitUnavailable(t, r, '--memory')) return;
  assert.notEqual(r.code, 0, 'the allocation succeeded under --memory 64m');
  assert.ok(!lines(r.stdout).includes('done'));
  // Killed by the OOM killer (137), or node failed to allocate (non-zero exit).
  assert.ok(r.code === 137 || /alloc|memory|heap/i.test(r.stderr),
    `unexpected failure (exit ${r.code}); stderr:\n${r.stderr}`);
});
