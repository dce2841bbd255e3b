// Network egress (issue 5): the cell fails closed. The proxy lives in
// mcpcell; when mcpcell is killed with SIGKILL mid-run, while a program in
// the cell keeps trying to reach the allowed host through it, the cell goes
// with it (no process left) and nothing more arrives at the upstream.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { CELL_PROXY_PORT, egressEvents, egressFlags, startStorySites, writeProfile } from './lib/egress.mjs';
import { pidsWithArg, pollUntilClean } from './lib/host.mjs';
import { runInCell, skipWithoutCell } from './lib/mcpcell.mjs';
import { NODE_BIN } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

// In the cell: every 100 ms, one request to the allowed host through the
// proxy (absolute-form HTTP) and one by name straight (DNS stub + redirect);
// one line per outcome on stdout.
const LOOP = `
const http = require('http');
const [host, port] = process.argv[1].split(':');
function once(opts, tag) {
  const req = http.request({ ...opts, timeout: 5000, headers: { Host: host + ':' + port, Connection: 'close' } }, (res) => {
    let body = ''; res.on('data', (d) => body += d); res.on('end', () => console.log(tag, res.statusCode, body.trim()));
  });
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', (e) => console.log(tag, 'error', e.code || e.message));
  req.end();
}
setInterval(() => {
  once({ host: '127.0.0.1', port: ${CELL_PROXY_PORT}, path: 'http://' + host + ':' + port + '/proxy' }, 'proxy');
  once({ host, port: Number(port), path: '/direct' }, 'direct');
}, 100);
`;

test('egress fails closed: kill -9 of mcpcell mid-run takes the cell and its network with it', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const sites = await startStorySites();
  t.after(() => sites.close());
  const marker = `e2e-egress-marker-${randomBytes(6).toString('hex')}`;
  t.after(() => {
    for (const pid of pidsWithArg(marker)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  });
  const dir = makeTempDir('egress-kill');
  const profile = writeProfile(dir, sites.outbound);
  const audit = path.join(dir, 'audit.jsonl');
  let killed;
  const result = await runInCell(egressFlags({ profile, audit, resolve: sites.resolve }),
    [NODE_BIN, '-e', LOOP, `wiki.acmecorp.com:${sites.wiki.port}`, marker], {
      onSpawn: (child) => {
        // Wait (bounded) until both ways out demonstrably work, then kill mcpcell hard.
        killed = pollUntilClean(() => {
          if (child.exitCode !== null) return 'mcpcell exited by itself';
          const paths = new Set(sites.wiki.requests.map((r) => r.url));
          return paths.has('/proxy') && paths.has('/direct') ? null : `upstream saw ${[...paths].join(', ') || 'nothing'}`;
        }, 30_000).then((complaint) => {
          child.kill('SIGKILL');
          return complaint;
        });
      },
    });
  assert.equal(await killed, null, `the cell never reached the allowed host; mcpcell exit ${result.code}; ` +
    `stdout:\n${result.stdout.slice(-2000)}\nstderr:\n${result.stderr}`);
  assert.equal(result.signal, 'SIGKILL');

  const left = await pollUntilClean(() => {
    const procs = pidsWithArg(marker);
    return procs.length ? `cell processes still running: ${procs.join(' ')}` : null;
  });
  assert.equal(left, null, left);
  assert.equal(result.pipesHeldOpen, false, "something of the cell kept mcpcell's stdout/stderr open");

  // Nothing of the cell is left to try, but make sure: whatever was in flight
  // has had time to land, and nothing new lands afterwards.
  await sleep(500);
  const seen = sites.wiki.contacts.length;
  await sleep(1_000);
  assert.equal(sites.wiki.contacts.length, seen, 'the upstream was contacted after the cell was gone');
  assert.deepEqual(sites.evil.contacts, []);

  // Before the kill, attempts were audited as they ended.
  const events = egressEvents(audit, { host: 'wiki.acmecorp.com', allowed: true });
  assert.ok(events.length >= 1, `no allowed egress event was written before the kill: ${JSON.stringify(egressEvents(audit))}`);
});
