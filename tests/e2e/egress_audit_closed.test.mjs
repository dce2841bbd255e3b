// The egress audit fails closed (docs/AUDIT.md, egress "Fails closed, like the
// relay"): a program in the cell keeps reaching the allowed host through the
// proxy and by name (DNS stub + redirect); the audit log is renamed away
// (someone else touched it: AuditLog's inode check fails the next write).
// From then on every attempt is refused with the log's problem, nothing more
// reaches the upstream, stderr says so once, and what was written before is
// an intact chain.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { renameSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { CELL_PROXY_PORT, egressFlags, startStorySites, writeProfile } from './lib/egress.mjs';
import { pollUntilClean } from './lib/host.mjs';
import { runInCell, skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN, NODE_BIN } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

// Every 100 ms one request through the proxy and one by name straight; one
// line per outcome on stdout.
const LOOP = `
const http = require('http');
const [host, port] = process.argv[1].split(':');
function once(opts, tag) {
  const req = http.request({ ...opts, timeout: 5000, headers: { Host: host + ':' + port, Connection: 'close' } }, (res) => {
    let body = ''; res.on('data', (d) => body += d); res.on('end', () => console.log(tag, res.statusCode, body.trim().replace(/\\n/g, ' ')));
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

test('egress audit fails closed: after a failed write nothing more leaves the cell', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const sites = await startStorySites();
  t.after(() => sites.close());
  const dir = makeTempDir('egress-audit-closed');
  const profile = writeProfile(dir, sites.outbound);
  const audit = path.join(dir, 'audit.jsonl');
  const moved = path.join(dir, 'moved.jsonl');
  let out = '';
  let err = '';
  let verdict;
  const refused = (tag) => out.split('\n').filter((l) => l.startsWith(tag + ' ') && !/ 200 /.test(l));
  const result = await runInCell(egressFlags({ profile, audit, resolve: sites.resolve }),
    [NODE_BIN, '-e', LOOP, `wiki.acmecorp.com:${sites.wiki.port}`], {
      onSpawn: (child) => {
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (err += d));
        verdict = (async () => {
          const paths = () => new Set(sites.wiki.requests.map((r) => r.url));
          const works = await pollUntilClean(() => (child.exitCode !== null ? 'mcpcell exited' :
            paths().has('/proxy') && paths().has('/direct') ? null : `upstream saw ${[...paths()].join(', ') || 'nothing'}`), 30_000);
          if (works) return works;
          renameSync(audit, moved);
          const failed = await pollUntilClean(() => (/egress: the audit log cannot be written/.test(err) ? null
            : 'no failure said on stderr'), 30_000);
          if (failed) return failed;
          // Some refusals of each kind, then the upstream's count; after as many
          // again, nothing more may have arrived (each tick would have sent two).
          const settle = (n) => pollUntilClean(() => (refused('proxy').length >= n && refused('direct').length >= n ? null
            : `refusals so far: ${refused('proxy').length} proxy, ${refused('direct').length} direct`), 30_000);
          const first = await settle(3);
          if (first) return first;
          const seen = sites.wiki.requests.length;
          const more = await settle(refused('proxy').length + 5);
          if (more) return more;
          return sites.wiki.requests.length === seen ? null
            : `${sites.wiki.requests.length - seen} requests reached the upstream after the audit failed`;
        })().finally(() => child.kill('SIGTERM'));
      },
    });
  assert.equal(await verdict, null, `stdout:\n${out.slice(-3000)}\nstderr:\n${err}`);
  // The proxy's refusal names the log's problem and what to do.
  const lastProxy = refused('proxy').at(-1);
  assert.match(lastProxy, /^proxy 403 .*the audit log cannot be written \(.*audit\.jsonl.*start mcpcell again/, lastProxy);
  assert.equal(err.match(/egress: the audit log cannot be written/g).length, 1, err);
  assert.deepEqual(sites.evil.contacts, []);
  // What was written before the failure is whole.
  const verify = spawnSync(MCPCELL_BIN, ['audit', 'verify', moved], { encoding: 'utf8' });
  assert.match(verify.stdout + verify.stderr, /ok: \d+ records/, verify.stdout + verify.stderr);
  assert.ok(result.signal || result.code !== null);
});
