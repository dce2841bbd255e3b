// Adversary pass adv21: the disk budget bounds `npm install` only; the npm
// run before it, `npm view` (an unpinned npx:// source's version), writes
// what the registry sends to npm's cache without one.
//
// Finding (LOW): adv19 gave the host npm's install a disk budget (1 GiB or
// 250,000 inodes, HostToolRun::disk). Every other npm run of a launch is
// started without it (npx_install.cc NpmTool::Run: `disk` defaults to
// none), and `npm view NAME version --json` (ResolveVersion, run for
// `npx://NAME` and for ranges) fetches the whole packument, which npm
// tees into its cache (the launch's own, ~/.cache/mcpcell/npx/.npmrc-PID-X/
// cache) while it buffers it whole in memory. A registry — a compromised
// private one, or a man in the middle of an http:// one — that answers
// with a packument of gigabytes makes the host's npm write it all to the
// user's disk (removed only when the launch ends) and hold it ~2-3 times
// over in memory, outside every cell and budget; npm stops only at Node's
// largest Buffer (4 GiB) or string (512 MiB, after the body has all been
// read and written). Measured on this host (load 8-9): a 300 MiB
// packument: the cache peaked at 301 MiB and npm's RSS at 1.28 GiB (`npm
// view` exit 0).
//   Reproduce: a registry whose packument for x is 1.4 GiB (a long string
//   field); `mcpcell install npx://x`: ~/.cache/mcpcell/npx/.npmrc-*/cache
//   passes 1.3 GiB while npm view reads it.
//   Fault: src/source/npx_install.cc:162 (ResolveVersion's Run passes
//   no HostToolRun::Disk) and :238-240 (the default of every Run).
//   Suggested fix: every npm run of the launch under the install's budget
//   (the disk holding the npx cache, 1 GiB, from the first npm run on), or
//   at least npm view and the config runs; and a cap on what npm may be
//   sent (npm has `--fetch-*` settings for time, none for size: the budget
//   is the bound).
//
// Bounded: the registry sends 1.4 GiB once (it stops when npm hangs up);
// the peak on disk is what npm writes of it, removed when the launch ends;
// npm's memory peaks at ~3 GiB for the launch's duration.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(3).toString('hex');
const BODY_MIB = 1400;
after(removeTempDirs);

/** A registry whose packument of `name` is BODY_MIB MiB (a padding string after a valid document). */
async function startHugePackumentRegistry(name) {
  const chunk = Buffer.alloc(1 << 20, 0x61);
  let sent = 0;
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    if (decodeURIComponent(req.url.slice(1).split('?')[0]) !== name) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not found"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(JSON.stringify({ name, 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': { name, version: '1.0.0' } } }).slice(0, -1));
    res.write(',"pad":"');
    let n = 0;
    let closed = false;
    res.on('close', () => { closed = true; });
    const pump = () => {
      while (!closed && n < BODY_MIB) {
        n++;
        sent++;
        if (!res.write(chunk)) { res.once('drain', pump); return; }
      }
      if (!closed) res.end('"}');
    };
    pump();
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    sentMiB: () => sent,
    close: () => { for (const s of sockets) s.destroy(); return new Promise((r) => server.close(r)); },
  };
}

test('adv21: npm view (an unpinned npx:// version) is held to the install\'s disk budget', {
  timeout: 400_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const name = `e2e-adv21-huge-${id}`;
  const reg = await startHugePackumentRegistry(name);
  t.after(() => reg.close());
  const home = makeTempDir('adv21-view-home');
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'),
    npm_config_registry: reg.url, npm_config_update_notifier: 'false', npm_config_fetch_retries: '0' };
  const npx = path.join(home, '.cache', 'mcpcell', 'npx');
  let peak = 0;
  const sample = setInterval(() => {
    if (!existsSync(npx)) return;
    const du = spawnSync('du', ['-sm', npx], { encoding: 'utf8' }).stdout;
    peak = Math.max(peak, Number(du.split('\t')[0]) || 0);
  }, 250);
  const r = await runMcpcell(['install', '--install-timeout=300s', `npx://${name}`], { env, guardMs: 330_000 }).finally(() => clearInterval(sample));
  t.diagnostic(`exit ${r.code}; the registry sent ${reg.sentMiB()} MiB; the npx cache peaked at ${peak} MiB\n${r.stderr.split('\n').slice(-4).join('\n')}`);
  assert.ok(reg.sentMiB() > 0, 'npm asked for the packument (test setup)');
  assert.ok(peak < 1228, `npm view wrote ${peak} MiB of one packument to the npx cache (the install's own budget is 1024 MiB)`);
});
