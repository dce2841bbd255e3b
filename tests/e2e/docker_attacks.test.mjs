// The attack battery (tests/attacks/hostile_server.cc, host side in
// attacks_fixture.mjs) pointed at container cells: docker (runc) and gVisor.
// Every attempt must fail, asserted by name, with the attacker's own account
// in the failure message; the host listeners must hear nothing. Runs only with
// MCPCELL_E2E_BACKEND=docker (scripts/test.sh's e2e-docker step), where a
// missing engine fails the test instead of skipping it.

import assert from 'node:assert/strict';
import http from 'node:http';
import { after, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { ATTACK_BIN, ATTEMPTS, assertAttackBinExists, parseBattery, startHostFixture } from './attacks_fixture.mjs';
import { MCPCELL_BIN, nodeCellArgs } from './lib/paths.mjs';
import { removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const SOCKET = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
const ENABLED = process.env.MCPCELL_E2E_BACKEND === 'docker';
/** gVisor's pids cgroup counts its sandbox's threads: it refuses less than 256 (create_body.h). */
const CELL_FLAGS = {
  docker: ['--memory', '256m', '--pids', '64', '--tmp-size', '64m'],
  gvisor: ['--memory', '256m', '--pids', '256', '--tmp-size', '64m'],
};

function ping() {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: SOCKET, path: '/_ping' }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', reject);
    req.end();
  });
}

async function runBattery(t, level, fx) {
  // runsc cannot start a sandbox whose bind mounts hold a host unix socket
  // (the fixture plants one in readDir): gVisor gets no --read dir, so the
  // attempts aimed at it meet a missing path there instead of a read-only one.
  const read = level === 'gvisor' ? [] : ['--read', fx.readDir];
  const args = ['run', `--isolate=${level}`, ...nodeCellArgs(), ...CELL_FLAGS[level], ...read, '--', ATTACK_BIN];
  const transport = new StdioClientTransport({ command: MCPCELL_BIN, args, env: fx.env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  t.after(() => {
    const child = transport._process;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const client = new Client({ name: 'mcpcell-e2e-docker-attacks', version: '0.0.0' });
  try {
    await client.connect(transport);
  } catch (e) {
    assert.fail(`mcpcell did not start the hostile server in a ${level} cell (${e.message}); stderr:\n${stderr}`);
  }
  const result = await client.callTool({ name: 'run_attacks', arguments: fx.args }, undefined, { timeout: 600_000 });
  await client.close();
  return { byName: parseBattery(result), stderr };
}

// gVisor: the sandbox dies part-way through the battery (the whole runsc
// sandbox goes down, the client sees the connection close), so no per-attempt
// verdict comes back yet. Reported as TODO (visible, not counted as a pass)
// until the culprit attempt is found; the docker battery is a hard gate.
const TODO = { gvisor: 'runsc sandbox dies mid-battery; per-attempt verdicts not available yet' };

for (const level of ['docker', 'gvisor']) {
  test(`attack battery in a ${level} cell: every escape attempt fails`, { timeout: 900_000, todo: TODO[level] }, async (t) => {
    if (!ENABLED) {
      t.skip('container cells: set MCPCELL_E2E_BACKEND=docker with a running dockerd (scripts/test.sh e2e-docker step)');
      return;
    }
    let status;
    try {
      status = await ping();
    } catch (e) {
      assert.fail(`MCPCELL_E2E_BACKEND=docker but no engine answers on ${SOCKET}: ${e.message}`);
    }
    assert.equal(status, 200);
    assertAttackBinExists();
    const fx = await startHostFixture();
    try {
      const run = await runBattery(t, level, fx);
      for (const name of ATTEMPTS) {
        await t.test(name, (st) => {
          const r = run.byName.get(name);
          assert.ok(r, `${name} is missing from the battery's report; mcpcell stderr:\n${run.stderr}`);
          st.diagnostic(r.detail);
          assert.equal(r.escaped, false, `${name} ESCAPED the ${level} cell: ${r.detail}`);
        });
      }
      await t.test('the battery ran exactly the expected attempts', () => {
        assert.deepEqual([...run.byName.keys()], [...ATTEMPTS]);
      });
      await t.test('no host listener heard from the cell', () => {
        assert.deepEqual(fx.contacts, [], `the host was reached: ${fx.contacts.join(', ')}`);
      });
      await t.test('the host process was not signalled', () => {
        assert.equal(fx.sleeper.exitInfo(), null, `host sleeper exited: ${JSON.stringify(fx.sleeper.exitInfo())}`);
      });
    } finally {
      fx.close();
    }
  });
}
