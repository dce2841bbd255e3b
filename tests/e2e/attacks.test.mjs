// The attack battery in a native cell: the hostile server
// (tests/attacks/hostile_server.cc) runs under `mcpcell run --isolate` as the
// stdio server of the real MCP SDK client, tries every escape it knows, and
// every one must fail — asserted by name, one subtest each, with the
// attacker's own account in the failure message. The host side (listeners, a
// sacrificial process) checks independently that nothing reached it.
// attacks_baseline.test.mjs runs the same attempts without a cell and shows
// that they do succeed there.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { ATTACK_BIN, ATTEMPTS, assertAttackBinExists, parseBattery, startHostFixture } from './attacks_fixture.mjs';
import { EXIT, lines, skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const LIMIT_FLAGS = ['--memory', '256m', '--pids', '64'];
/** Attempts that are only contained by the limits above. */
const NEEDS_LIMITS = new Set(['fork_bomb', 'memory_bomb']);
/** A safety net so a hung cell fails the test; not a measurement. */
const CALL_GUARD_MS = 600_000;

/**
 * Starts the hostile server in a cell and runs the whole battery. Resolves to
 * { byName, stderr } or, when the cell did not start, { failed: {exit, message, stderr} }.
 */
async function runBattery(t, cellArgs, fx) {
  const s = startServer(t, cellArgs, [ATTACK_BIN], { env: fx.env });
  try {
    await s.connect();
  } catch (e) {
    const exit = await Promise.race([s.exited, sleep(10_000).then(() => null)]);
    return { failed: { exit, message: e.message, stderr: s.stderr() } };
  }
  const result = await s.client.callTool({ name: 'run_attacks', arguments: fx.args }, undefined,
    { timeout: CALL_GUARD_MS });
  await s.client.close();
  return { byName: parseBattery(result), stderr: s.stderr(), exit: await s.exited };
}

function describeFailure(f) {
  return `mcpcell did not start the hostile server (${f.message}); exit ${JSON.stringify(f.exit)}; ` +
    `stderr:\n${f.stderr}`;
}

/** Process state letter from /proc/<pid>/stat ('Z' = dead, not yet reaped), or null if gone. */
function procState(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

test('attack battery in a native cell: every escape attempt fails', { timeout: 900_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  assertAttackBinExists();
  const fx = await startHostFixture();
  try {
    const base = ['--tmp-size', '64m', '--read', fx.readDir];
    let run = await runBattery(t, [...LIMIT_FLAGS, ...base], fx);
    let limitSkip = null;
    if (run.failed) {
      // Limits this machine cannot enforce for this user are refused (122),
      // never ignored: run again without them and say so for the attempts
      // they would have contained.
      if (run.failed.exit?.code !== EXIT.isolationUnavailable) assert.fail(describeFailure(run.failed));
      limitSkip = `${LIMIT_FLAGS.join(' ')} cannot be enforced here: ${lines(run.failed.stderr).join(' / ')}`;
      if (process.env.E2E_REQUIRE_LIMITS === '1') assert.fail(`${limitSkip} (E2E_REQUIRE_LIMITS=1)`);
      t.diagnostic(`${limitSkip}; battery run again without those flags`);
      run = await runBattery(t, base, fx);
      if (run.failed) assert.fail(describeFailure(run.failed));
    }

    for (const name of ATTEMPTS) {
      await t.test(name, (st) => {
        const r = run.byName.get(name);
        assert.ok(r, `${name} is missing from the battery's report; mcpcell stderr:\n${run.stderr}`);
        if (limitSkip && NEEDS_LIMITS.has(name)) {
          st.skip(`${limitSkip} (without them the attempt reported escaped=${r.escaped}: ${r.detail})`);
          return;
        }
        st.diagnostic(r.detail);
        assert.equal(r.escaped, false, `${name} ESCAPED the cell: ${r.detail}`);
      });
    }

    await t.test('the battery ran exactly the expected attempts', () => {
      assert.deepEqual([...run.byName.keys()], [...ATTEMPTS]);
    });
    await t.test('no host listener heard from the cell', () => {
      assert.deepEqual(fx.contacts, [], `the host was reached: ${fx.contacts.join(', ')}`);
    });
    await t.test('the host process was not signalled', () => {
      const state = procState(fx.sleeper.pid);
      assert.equal(fx.sleeper.exitInfo(), null, `host sleeper exited: ${JSON.stringify(fx.sleeper.exitInfo())}`);
      assert.ok(state !== null && state !== 'Z', `host sleeper state: ${state}`);
    });
    await t.test('mcpcell exited 0 when the client closed', () => {
      assert.deepEqual(run.exit, { code: 0, signal: null }, `mcpcell stderr:\n${run.stderr}`);
    });
  } finally {
    fx.close();
  }
});
