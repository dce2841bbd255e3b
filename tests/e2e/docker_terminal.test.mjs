// Container cells under a terminal (see process.test.mjs for native cells):
// they get the client's stdio through FIFOs or the attach stream, never as
// fds. No terminal may reach them, their output reaches the terminal
// filtered, and the caller's process group is out of their reach. Runs in
// the e2e-docker step (MCPCELL_E2E_BACKEND=docker).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ATTACK_BIN, assertAttackBinExists } from './attacks_fixture.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { assertContained, assertTerminalUntouched, attackArgs, ptyRun, results } from './lib/pty.mjs';

const TERMINAL_ATTEMPTS = ['terminal_access', 'process_group', 'signal_caller_group', 'realtime_priority'];

for (const level of ['docker', 'podman', 'gvisor']) {
  test(`${level} cell under a terminal: no terminal inside, escape sequences shown, the caller's group untouched`, { timeout: 300_000 }, async (t) => {
    if (process.env.MCPCELL_E2E_BACKEND !== 'docker') {
      t.skip('container cells: set MCPCELL_E2E_BACKEND=docker with a running dockerd (scripts/test.sh e2e-docker step)');
      return;
    }
    if (level === 'podman' && process.getuid() !== 0 && !process.env.CONTAINER_HOST) {
      // As in podman.test.mjs: a normal user's podman is rootless, its own service; the test step starts root's only.
      t.skip(`podman cells here use root's podman service, which uid ${process.getuid()} may not use`);
      return;
    }
    assertAttackBinExists();
    const script = 'printf "title \\033]0;pwned\\007 end\\n" >&2; exec "$0" "$@"';
    // gVisor's scheduling is its own kernel's: a nice value the guest sets
    // there (it grants nice -1) changes nothing on the host; not an attempt there.
    const attempts = level === 'gvisor' ? TERMINAL_ATTEMPTS.filter((a) => a !== 'realtime_priority') : TERMINAL_ATTEMPTS;
    const report = ptyRun({ stdin: 'tty', stdout: 'tty', stderr: 'tty' },
      [MCPCELL_BIN, 'run', `--isolate=${level}`, '--pids', '512', '--grace', '60s', '--read', ATTACK_BIN, '--', '/bin/sh', '-c',
        script, ATTACK_BIN, '--run', attempts.join(','), attackArgs()]);
    for (const r of results(report).values()) t.diagnostic(`${r.name}: ${r.detail}`);
    assertContained(report, attempts);
    assertTerminalUntouched(report);
    assert.ok(!report.tty_output.includes('\x1b'), `a raw ESC reached the terminal:\n${JSON.stringify(report.tty_output)}`);
    assert.match(report.tty_output, /title \^\[\]0;pwned\^G end/);
  });
}
