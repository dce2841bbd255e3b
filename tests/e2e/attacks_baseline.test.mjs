// The attack battery WITHOUT a cell: the hostile server runs directly on the
// host. Here the attempts must succeed — this proves they are real attacks
// that can detect an escape, so their failing inside a cell means something.
// Only attempts that are harmless on a bare host are run (no clock, hostname,
// mount or cgroup changes).

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { ATTACK_BIN, assertAttackBinExists, parseBattery, startHostFixture } from './attacks_fixture.mjs';
import { removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const isRoot = process.getuid() === 0;

// What must escape on a bare host, for anyone / only for root.
const MUST_ESCAPE = ['see_host_processes', 'tcp_connect_host', 'read_host_file', 'escape_via_proc_root',
  'read_parent_environ', 'env_leak', 'udp_send_host', 'abstract_unix_socket', 'unix_socket_in_read_dir',
  'write_readonly_bind', 'signal_host_process', 'setuid_binary'];
const MUST_ESCAPE_AS_ROOT = ['read_etc_shadow', 'capabilities_present'];
// Harmless on a host; reported (diagnostic) but not asserted, since they
// depend on the host's sysctls and kernel config.
const ALSO_RUN = ['ipv6_connect', 'unshare_user_ns', 'userfaultfd', 'perf_event_open', 'leaked_fd'];
// The 32-bit entry: reached on a bare host whose kernel has one (IA32
// emulation), which proves the attempt tells the i386 table from the x86_64
// one; a kernel without it answers SIGSEGV. Either way, the kernel decides.
const I386 = 'i386_syscall';

test('baseline: without a cell the battery detects escapes', { timeout: 120_000 }, async (t) => {
  assertAttackBinExists();
  const fx = await startHostFixture();
  try {
    const transport = new StdioClientTransport({
      command: ATTACK_BIN,
      args: [],
      env: fx.env, // the secret in the server's own environment: env_leak must see it
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const client = new Client({ name: 'attacks-baseline', version: '0.0.0' });
    await client.connect(transport);
    // see_host_processes runs before signal_host_process (battery order).
    const only = [...MUST_ESCAPE, ...MUST_ESCAPE_AS_ROOT, ...ALSO_RUN, I386];
    const result = await client.callTool({ name: 'run_attacks', arguments: { ...fx.args, only } },
      undefined, { timeout: 100_000 });
    await client.close();
    const byName = parseBattery(result);

    for (const name of MUST_ESCAPE) {
      await t.test(`${name} escapes on a bare host`, () => {
        const r = byName.get(name);
        assert.ok(r, `${name} missing from the battery's report; stderr:\n${stderr}`);
        assert.equal(r.escaped, true, `${name} did not detect the escape: ${r.detail}`);
      });
    }
    for (const name of MUST_ESCAPE_AS_ROOT) {
      await t.test(`${name} escapes on a bare host as root`, (st) => {
        if (!isRoot) {
          st.skip(`needs root (running as uid ${process.getuid()})`);
          return;
        }
        const r = byName.get(name);
        assert.ok(r, `${name} missing from the battery's report`);
        assert.equal(r.escaped, true, `${name} did not detect the escape: ${r.detail}`);
      });
    }
    await t.test(`${I386}: the host's 32-bit entry is reached, or the kernel has none`, (st) => {
      const r = byName.get(I386);
      assert.ok(r, `${I386} missing from the battery's report`);
      st.diagnostic(r.detail);
      if (/no 32-bit syscall entry/.test(r.detail)) return;
      assert.equal(r.escaped, true, `${I386} did not detect the reachable 32-bit entry: ${r.detail}`);
      assert.match(r.detail, /32-BIT ABI REACHABLE: int 0x80 nr 39 returned -14 /, 'i386 mkdir(NULL) answers EFAULT');
    });
    for (const name of ALSO_RUN) {
      const r = byName.get(name);
      t.diagnostic(`${name}: escaped=${r?.escaped} ${r?.detail}`);
    }
    await t.test('the host saw the contacts the battery claims', async () => {
      assert.ok(fx.contacts.some((c) => c.startsWith('tcp4')), `contacts: ${fx.contacts.join(', ')}`);
      assert.ok(fx.contacts.some((c) => c.startsWith('udp')), `contacts: ${fx.contacts.join(', ')}`);
      // signal_host_process sent SIGTERM to the sacrificial sleeper (bounded
      // wait: a hang guard, not a measurement).
      const guard = sleep(10_000).then(() => 'still running 10 s after run_attacks returned');
      assert.deepEqual(await Promise.race([fx.sleeper.exited, guard]), { code: null, signal: 'SIGTERM' });
    });
  } finally {
    fx.close();
  }
});
