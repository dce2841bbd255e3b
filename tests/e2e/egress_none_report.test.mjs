// Silence on a denied network (issue 14 item 8): a server with network
// profile none used to get no network and no message, and failed with its
// own EAI_AGAIN. Now a native cell without network still has mcpcell's DNS
// stub (and nothing else: no route, no proxy): it answers every name with
// NXDOMAIN and reports the first lookup of each host on stderr and in the
// audit log, saying how to allow it; bounded like every egress denial (once
// per host, at most 20 hosts on stderr, the audit log's own limits).

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';

import { egressEvents } from './lib/egress.mjs';
import { runInCell, skipWithoutCell } from './lib/mcpcell.mjs';
import { NODE_BIN } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

/** Looks each name up (twice) in the cell and prints {name: error code or addresses}. */
const lookupScript = `
const dns = require('node:dns');
const names = JSON.parse(process.argv[1]);
(async () => {
  const out = {};
  for (const n of names) {
    for (let i = 0; i < 2; i++) {
      try { out[n] = (await dns.promises.lookup(n, { all: true })).map((a) => a.address); }
      catch (e) { out[n] = e.code; }
    }
  }
  console.log(JSON.stringify(out));
})();`;

const denials = (stderr) => stderr.split('\n').filter((l) => l.startsWith('mcpcell: egress denied:'));

test('network none: a looked-up host is reported once on stderr and in the audit log, with how to allow it', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const audit = path.join(makeTempDir('egress-none-report'), 'audit.jsonl');
  const r = await runInCell(['--permission-profile', 'none', '--audit-log', audit],
    [NODE_BIN, '-e', lookupScript, JSON.stringify(['youtube.com', 'localhost'])]);
  assert.equal(r.code, 0, `exit ${r.code}; stderr:\n${r.stderr}`);
  const seen = JSON.parse(r.stdout);
  await t.test('the server sees "no such name" (ENOTFOUND), not a resolver timeout (EAI_AGAIN); localhost is its own', () => {
    assert.equal(seen['youtube.com'], 'ENOTFOUND', JSON.stringify(seen));
    assert.ok(Array.isArray(seen.localhost) && seen.localhost.includes('127.0.0.1'), JSON.stringify(seen));
  });
  await t.test('stderr: one sentence for youtube.com (two lookups, A and AAAA each), saying what to write', () => {
    const lines = denials(r.stderr).filter((l) => l.includes('youtube.com'));
    assert.equal(lines.length, 1, `stderr:\n${r.stderr}`);
    assert.match(lines[0], /egress denied: DNS name youtube\.com \((A|AAAA)\) \(network none: this server has no network/);
    assert.match(lines[0], /to allow it, pass --allow-host youtube\.com, or in the permission profile: "network": \{"outbound": \{"allow_host": \["youtube\.com"\]\}\}/);
    assert.equal(denials(r.stderr).filter((l) => l.includes('localhost')).length, 0, 'the cell\'s own localhost was reported');
  });
  await t.test('audit: denied dns events for youtube.com with the rule and how to allow it', () => {
    const events = egressEvents(audit, { host: 'youtube.com' });
    assert.ok(events.length >= 1, JSON.stringify(egressEvents(audit)));
    for (const e of events) {
      assert.equal(e.via, 'dns');
      assert.equal(e.allowed, false);
      assert.match(e.rule, /^network none/);
      assert.match(e.how_to_allow, /--allow-host youtube\.com/);
    }
    assert.deepEqual(egressEvents(audit, { host: 'localhost' }), []);
  });
});

test('network none: reports are bounded — 40 distinct hosts give at most 20 sentences and one "more follow" line', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const audit = path.join(makeTempDir('egress-none-cap'), 'audit.jsonl');
  const names = Array.from({ length: 40 }, (_, i) => `host${i}.example${i}.org`);
  const r = await runInCell(['--audit-log', audit], [NODE_BIN, '-e', lookupScript, JSON.stringify(names)]);
  assert.equal(r.code, 0, `exit ${r.code}; stderr:\n${r.stderr}`);
  const seen = JSON.parse(r.stdout);
  for (const n of names) assert.equal(seen[n], 'ENOTFOUND', `${n}: ${seen[n]}`);
  const lines = denials(r.stderr);
  assert.equal(lines.length, 20, `stderr:\n${r.stderr}`);
  const more = r.stderr.split('\n').filter((l) => l.includes('more egress denials follow'));
  assert.equal(more.length, 1, `stderr:\n${r.stderr}`);
  // The audit log has every host (its own limits are far above 40 names).
  const hosts = new Set(egressEvents(audit).map((e) => e.host));
  for (const n of names) assert.ok(hosts.has(n), `${n} is not in the audit log`);
});
