// Adversary pass (adv2) on the container DNS-report relay
// (src/cell/docker/dns_report.h): the relay's `serve` half runs in the
// container as the server's uid, and mcpcell copies up to 1 KiB of its
// stderr onto its own stderr ("notes"). The server can open
// /proc/<relay>/fd/2 (same uid; docker_dns_report.test.mjs opens fd/1 the
// same way) and write terminal escapes there: they reached the user's
// terminal raw (clear screen, a window title, a forged "mcpcell:" line).
//
// Runs in the e2e-docker steps (root, and the docker-group user
// mcpcell-docker): MCPCELL_E2E_BACKEND=docker; plain e2e runs skip with that reason.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';

import { engineRequest } from './lib/engine.mjs';
import { runMcpcell } from './lib/mcpcell.mjs';
import { NODE_BIN, nodeCellArgs } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const DOCKER_SOCKET = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
const ENABLED = process.env.MCPCELL_E2E_BACKEND === 'docker';

// Finds the relay's serving half, writes escapes to its stderr, then keeps
// the relay busy with lookups (bounded: 40 lookups) so mcpcell reads the note.
const PROBE = String.raw`
const fs = require('node:fs'), dns = require('node:dns');
(async () => {
  let relay;
  for (let i = 0; i < 100 && relay === undefined; i++) {
    relay = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).find((p) => {
      try { return fs.readFileSync('/proc/' + p + '/cmdline', 'latin1').startsWith('/run/mcpcell-dns/relay\0serve'); } catch { return false; }
    });
    if (relay === undefined) await new Promise((r) => setTimeout(r, 50));
  }
  const out = { relay_found: relay !== undefined };
  if (relay) {
    try {
      const fd = fs.openSync('/proc/' + relay + '/fd/2', 'w');
      fs.writeSync(fd, 'ADV2-NOTE\x1b[2J\x1b]0;owned\x07\x1b[1A\x1b[2K\nmcpcell: forged line\n');
      fs.closeSync(fd);
      out.written = true;
    } catch (e) { out.written = e.code; }
  }
  for (let i = 0; i < 40; i++) { try { await dns.promises.lookup('adv2-' + i + '.example.org'); } catch {} }
  console.log(JSON.stringify(out));
})();`;

test('docker cell, profile none: escapes the server writes to the DNS relay\'s stderr do not reach mcpcell\'s stderr raw', { timeout: 180_000 }, async (t) => {
  if (!ENABLED) {
    t.skip('container cells: set MCPCELL_E2E_BACKEND=docker with a running dockerd (scripts/test.sh e2e-docker step)');
    return;
  }
  const ping = await engineRequest(DOCKER_SOCKET, 'GET', '/_ping');
  assert.equal(ping.status, 200, `docker /_ping answered ${ping.status}`);
  const audit = path.join(makeTempDir('adv2-dns'), 'audit.jsonl');
  const r = await runMcpcell(['run', '--isolate=docker', ...nodeCellArgs(), '--relay=off', '--permission-profile', 'none',
    '--audit-log', audit, '--', NODE_BIN, '-e', PROBE], { guardMs: 170_000 });
  assert.equal(r.code, 0, `exit ${r.code}; stderr:\n${r.stderr}`);
  const seen = JSON.parse(r.stdout.trim().split('\n').pop());
  assert.equal(seen.relay_found, true, JSON.stringify(seen));
  assert.equal(seen.written, true, `the server could not open the relay's stderr (${JSON.stringify(seen)}): nothing to test`);
  // The note did arrive (else the test shows nothing)...
  assert.match(r.stderr, /ADV2-NOTE/, `the relay's note never reached stderr:\n${r.stderr}`);
  // ...but no escape or bell of it reached the terminal, and no line of it reads as mcpcell's own.
  assert.ok(!r.stderr.includes('\x1b'), `an ESC from the server reached mcpcell's stderr raw:\n${JSON.stringify(r.stderr)}`);
  assert.ok(!r.stderr.includes('\x07'), `a BEL from the server reached mcpcell's stderr raw:\n${JSON.stringify(r.stderr)}`);
  assert.ok(!/^mcpcell: forged line$/m.test(r.stderr), `the server forged a line of mcpcell's own:\n${r.stderr}`);
});
