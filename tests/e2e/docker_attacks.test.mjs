// The attack battery (tests/attacks/hostile_server.cc, host side in
// attacks_fixture.mjs) pointed at container cells: docker (runc) and gVisor
// (runsc with --oci-seccomp, scripts/docker.sh; without it runsc ignores the
// seccomp profile and ptrace/unshare/io_uring are allowed in the sandbox).
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

/**
 * Runs the hostile server's battery (or only the named attempts) in a `level`
 * cell. Resolves to { byName, stderr, pid }, or { died: message, stderr, pid }
 * when the cell went away during the call (gVisor: a bomb takes the whole
 * sandbox down with it).
 */
async function runBattery(t, level, fx, only) {
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
  const pid = transport.pid;
  try {
    const result = await client.callTool({ name: 'run_attacks', arguments: only ? { ...fx.args, only } : fx.args },
      undefined, { timeout: 600_000 });
    await client.close();
    return { byName: parseBattery(result), stderr, pid };
  } catch (e) {
    await client.close().catch(() => {});
    return { died: e.message, stderr, pid };
  }
}

function containersOf(pid) {
  const filters = encodeURIComponent(JSON.stringify({ label: [`io.mcpcell.supervisor=${pid}`] }));
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: SOCKET, path: `/v1.41/containers/json?all=1&filters=${filters}` }, (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (d) => (data += d));
      res.on('end', () => resolve(JSON.parse(data)));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * How an attempt must end, where more than one way would count as "not
 * escaped". i386_syscall (docs/ATTACKS.md): in a runc container the host
 * kernel's 32-bit entry is reached and seccomp's bad-arch action kills the
 * process (or the kernel has no such entry: SIGSEGV). In gVisor the Sentry
 * takes the syscall stop and looks the number up in its own x86_64 table;
 * the host kernel executes nothing, and the attempt proves which table
 * answered. Any other outcome fails, whatever the machine.
 */
const I386_HOST = /killed by seccomp \(bad-arch action\)|this kernel has no 32-bit syscall entry/;
const EXPECTED_HOW = {
  docker: { i386_syscall: I386_HOST },
  gvisor: {
    i386_syscall: new RegExp(`${I386_HOST.source}|answered by the sandbox's kernel through its x86_64 table`),
  },
};

/** Attempts that gVisor contains by losing the whole sandbox (its memory/pids cgroup). */
const SANDBOX_KILLERS = ['fork_bomb', 'memory_bomb'];

for (const level of ['docker', 'gvisor']) {
  test(`attack battery in a ${level} cell: every escape attempt fails`, { timeout: 900_000 }, async (t) => {
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
      // gVisor: the bombs run on their own (below); they end the whole sandbox.
      const killers = level === 'gvisor' ? SANDBOX_KILLERS : [];
      const run = await runBattery(t, level, fx, killers.length ? ATTEMPTS.filter((a) => !killers.includes(a)) : undefined);
      assert.ok(!run.died, `the ${level} cell died during the battery (${run.died}); stderr:\n${run.stderr}`);
      for (const name of killers) {
        await t.test(`${name} (alone: contained, or the sandbox dies and is removed)`, async (st) => {
          const r = await runBattery(st, level, fx, [name]);
          if (r.died) {
            st.diagnostic(`the ${level} sandbox went down: ${r.died}`);
            assert.deepEqual(await containersOf(r.pid), [], 'the dead sandbox\'s container was left behind');
          } else {
            const v = r.byName.get(name);
            assert.ok(v, `${name} missing from the report`);
            assert.equal(v.escaped, false, `${name} ESCAPED the ${level} cell: ${v.detail}`);
          }
        });
      }
      for (const name of ATTEMPTS.filter((a) => !killers.includes(a))) {
        await t.test(name, (st) => {
          const r = run.byName.get(name);
          assert.ok(r, `${name} is missing from the battery's report; mcpcell stderr:\n${run.stderr}`);
          st.diagnostic(r.detail);
          assert.equal(r.escaped, false, `${name} ESCAPED the ${level} cell: ${r.detail}`);
          if (EXPECTED_HOW[level][name]) assert.match(r.detail, EXPECTED_HOW[level][name], `${name}: not stopped the way the ${level} cell should`);
        });
      }
      await t.test('the battery ran exactly the expected attempts', () => {
        assert.deepEqual([...run.byName.keys()], ATTEMPTS.filter((a) => !killers.includes(a)));
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
