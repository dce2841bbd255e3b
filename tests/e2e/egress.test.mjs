// Network egress (issue 5), the user story: a fetch MCP server in a native
// cell with the profile
//   {"network":{"outbound":{"allow_host":[".acmecorp.com","acmecorp.atlassian.net"],
//                           "allow_port":[...]}}}
// reaches wiki.acmecorp.com and acmecorp.atlassian.net and nothing else, and
// every attempt is on the audit log with the rule that decided. The "sites"
// are HTTP servers on this machine (ephemeral ports), named with --resolve
// pins; evil.example is pinned to a server of its own too, so a leak would be
// seen there, not just inferred. Two real servers on the SDK: one with Node's
// built-in fetch (ignores proxy variables: DNS stub + redirect), one with a
// proxy-aware client (HTTP forwarding and CONNECT). Also: https end to end
// through both paths, curl (a third-party client) through every way out,
// audit-only mode (insecure_allow_all), and the cell's proxy environment.
//
// Bypass attempts: egress_bypass.test.mjs. Fail closed: egress_fail_closed.test.mjs.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import {
  FETCH_BUILTIN, FETCH_PROXY_AWARE, SYNTHETIC, denialLines, egressEvents, egressFlags, fetchResult, startStorySites,
  startUpstream, auditEvents, makeCertificate, newSecret, writeProfile,
} from './lib/egress.mjs';
import { EXIT, runInCell, runMcpcell, skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { NODE_BIN } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

/** The sentence mcpcell prints and answers with for a host the profile does not list. */
const hostDenial = (host) => new RegExp(`no allow_host entry matches "${host.replace(/\./g, '\\.')}"`);

/**
 * Starts `script` (a fetch server) in a cell with the story's profile and an
 * audit log; returns {s, fetch(url, extra), audit}.
 */
async function startFetchServer(t, script, sites, { outbound = sites.outbound, resolve = sites.resolve, extraArgs = [] } = {}) {
  const dir = makeTempDir('egress');
  const profile = writeProfile(dir, outbound);
  const audit = path.join(dir, 'audit.jsonl');
  const s = startServer(t, [...egressFlags({ profile, audit, resolve }), ...extraArgs], [NODE_BIN, script]);
  try {
    await s.connect();
  } catch (e) {
    assert.fail(`the fetch server did not start in an allow-list cell (${e.message}); mcpcell stderr:\n${s.stderr()}`);
  }
  const fetch = async (url, extra = {}) =>
    fetchResult(await s.client.callTool({ name: 'fetch_url', arguments: { url, ...extra } }, undefined, { timeout: 60_000 }));
  return { s, fetch, audit };
}

/** Closes the client and waits for mcpcell: attempts are audited when they end. */
async function finish(s) {
  await s.client.close();
  const exit = await s.exited;
  assert.deepEqual(exit, { code: 0, signal: null }, `mcpcell did not exit cleanly; stderr:\n${s.stderr()}`);
}

/** The one launch event's server name: every egress event must name the server the same way. */
function serverName(audit) {
  const launch = auditEvents(audit).filter((e) => e.event === 'launch');
  assert.equal(launch.length, 1, `expected one launch event, got ${JSON.stringify(auditEvents(audit))}`);
  assert.ok(launch[0].server, 'launch event has no server');
  return launch[0].server;
}

/** Field-by-field check of one allowed, completed connection. */
function assertAllowedEvent(e, { server, via, host, port, rule }) {
  assert.equal(e.event, 'egress');
  assert.equal(e.server, server);
  assert.equal(e.via, via);
  assert.equal(e.host, host);
  assert.equal(e.port, port);
  assert.equal(e.address, '127.0.0.1', 'the pinned address is the one connected to');
  assert.equal(e.allowed, true);
  // The rule that allowed the name, then why the (internal) address was
  // accepted: every site here is pinned to 127.0.0.1 with --resolve.
  assert.ok(e.rule.startsWith(rule), `rule ${JSON.stringify(e.rule)} does not start with ${JSON.stringify(rule)}`);
  assert.match(e.rule, /--resolve pin/, 'the rule does not say the loopback address was accepted because it was pinned');
  assert.ok(Number.isInteger(e.bytes_out) && e.bytes_out > 0, `bytes_out ${e.bytes_out}`);
  assert.ok(Number.isInteger(e.bytes_in) && e.bytes_in > 0, `bytes_in ${e.bytes_in}`);
  assert.ok(Number.isInteger(e.duration_ms) && e.duration_ms >= 0, `duration_ms ${e.duration_ms}`);
  assert.match(e.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(e.how_to_allow, undefined);
}

/** Field-by-field check of one denied attempt. */
function assertDeniedEvent(e, { server, via, host, port, rule }) {
  assert.equal(e.event, 'egress');
  assert.equal(e.server, server);
  assert.equal(e.via, via);
  assert.equal(e.host, host);
  assert.equal(e.port, port);
  assert.equal(e.allowed, false);
  assert.match(e.rule, rule);
  assert.equal(e.address, '', 'a denied attempt connects to no address');
  assert.equal(e.bytes_in, 0, 'nothing came back to a denied attempt');
  assert.ok(Number.isInteger(e.duration_ms) && e.duration_ms >= 0, `duration_ms ${e.duration_ms}`);
  assert.match(e.how_to_allow ?? '', /network\.outbound\.allow_(host|port)/);
}

test('egress user story, built-in fetch: wiki.acmecorp.com and acmecorp.atlassian.net reached, evil.example denied, all audited', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const sites = await startStorySites();
  t.after(() => sites.close());
  const { s, fetch, audit } = await startFetchServer(t, FETCH_BUILTIN, sites);

  const wikiUrl = `http://wiki.acmecorp.com:${sites.wiki.port}/page?id=1`;
  const wiki = await fetch(wikiUrl);
  assert.equal(wiki.ok, true, `allowed fetch failed: ${JSON.stringify(wiki)}; stderr:\n${s.stderr()}`);
  assert.equal(wiki.status, 200);
  assert.match(wiki.body, new RegExp(sites.wiki.token));

  const atlassian = await fetch(`http://acmecorp.atlassian.net:${sites.atlassian.port}/`);
  assert.equal(atlassian.ok, true, JSON.stringify(atlassian));
  assert.match(atlassian.body, new RegExp(sites.atlassian.token));

  // Denied by name: the cell's DNS stub does not even resolve it.
  const evil = await fetch(`http://evil.example:${sites.evil.port}/steal`);
  assert.equal(evil.ok, false, `evil.example was fetched: ${JSON.stringify(evil)}`);
  assert.match(evil.error, /ENOTFOUND|EAI_NONAME|getaddrinfo/, JSON.stringify(evil));

  // Allowed name, denied port: it resolves (to a synthetic address), the
  // connection is redirected to the proxy, which refuses it.
  const badPort = await fetch(`http://wiki.acmecorp.com:${sites.otherPort.port}/`);
  assert.equal(badPort.ok, false, `a port outside allow_port was fetched: ${JSON.stringify(badPort)}`);

  await finish(s);
  const stderr = s.stderr();

  await t.test('the upstreams saw exactly the allowed requests', () => {
    assert.deepEqual(sites.wiki.requests.map((r) => [r.method, r.url, r.host]),
      [['GET', '/page?id=1', `wiki.acmecorp.com:${sites.wiki.port}`]]);
    assert.equal(sites.atlassian.requests.length, 1);
    assert.deepEqual(sites.evil.contacts, [], 'evil.example (pinned to a local server) was reached');
    assert.deepEqual(sites.otherPort.contacts, [], 'the port outside allow_port was reached');
  });

  const server = serverName(audit);
  await t.test('audit: the allowed connections, field by field', () => {
    const wikiEvents = egressEvents(audit, { host: 'wiki.acmecorp.com', port: sites.wiki.port });
    assert.equal(wikiEvents.length, 1, JSON.stringify(wikiEvents));
    assertAllowedEvent(wikiEvents[0], { server, via: 'redirect', host: 'wiki.acmecorp.com', port: sites.wiki.port,
      rule: `allow_host ".acmecorp.com" + allow_port ${sites.wiki.port}` });
    const atl = egressEvents(audit, { host: 'acmecorp.atlassian.net', port: sites.atlassian.port });
    assert.equal(atl.length, 1, JSON.stringify(atl));
    assertAllowedEvent(atl[0], { server, via: 'redirect', host: 'acmecorp.atlassian.net', port: sites.atlassian.port,
      rule: `allow_host "acmecorp.atlassian.net" + allow_port ${sites.atlassian.port}` });
  });

  await t.test('audit: evil.example denied at the DNS stub (one event per query)', () => {
    const events = egressEvents(audit, { host: 'evil.example' });
    assert.ok(events.length >= 1, `no audit event for evil.example: ${JSON.stringify(egressEvents(audit))}`);
    for (const e of events) {
      assertDeniedEvent(e, { server, via: 'dns', host: 'evil.example', port: 0, rule: hostDenial('evil.example') });
      assert.match(e.dns_type, /^(A|AAAA)$/);
      assert.equal(e.bytes_out, 0);
    }
  });

  await t.test('audit: the port outside allow_port denied at the proxy', () => {
    const events = egressEvents(audit, { host: 'wiki.acmecorp.com', port: sites.otherPort.port });
    assert.equal(events.length, 1, JSON.stringify(egressEvents(audit)));
    assertDeniedEvent(events[0], { server, via: 'redirect', host: 'wiki.acmecorp.com', port: sites.otherPort.port,
      rule: new RegExp(`port ${sites.otherPort.port} is not in allow_port`) });
  });

  await t.test('audit: allowed names resolved to synthetic addresses only (any dns events are allowed ones)', () => {
    for (const e of egressEvents(audit, { via: 'dns', allowed: true })) {
      assert.match(e.host, /^(wiki\.acmecorp\.com|acmecorp\.atlassian\.net)$/, JSON.stringify(e));
      if (e.address) assert.match(e.address, SYNTHETIC);
    }
  });

  await t.test('stderr: the denial sentence, once per host', () => {
    const evilLines = denialLines(stderr, 'evil.example');
    assert.equal(evilLines.length, 1, `stderr:\n${stderr}`);
    assert.match(evilLines[0], /^mcpcell: egress denied: /);
    assert.match(evilLines[0], hostDenial('evil.example'));
    assert.match(evilLines[0], /add "evil\.example" to network\.outbound\.allow_host/);
    const portLines = denialLines(stderr, `wiki.acmecorp.com:${sites.otherPort.port}`);
    assert.equal(portLines.length, 1, `stderr:\n${stderr}`);
    assert.match(portLines[0], new RegExp(`add ${sites.otherPort.port} to network\\.outbound\\.allow_port`));
  });
});

test('egress, proxy-aware fetch server: forwarding and CONNECT reach only the allowed host; denials are 403s that explain', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const sites = await startStorySites();
  t.after(() => sites.close());
  const { s, fetch, audit } = await startFetchServer(t, FETCH_PROXY_AWARE, sites);
  const wikiHost = `wiki.acmecorp.com:${sites.wiki.port}`;

  const forwarded = await fetch(`http://${wikiHost}/fwd`);
  assert.equal(forwarded.ok, true, `${JSON.stringify(forwarded)}; stderr:\n${s.stderr()}`);
  assert.equal(forwarded.via, 'forward', 'the server did not use the cell\'s HTTP_PROXY');
  assert.equal(forwarded.status, 200);
  assert.match(forwarded.body, new RegExp(sites.wiki.token));

  const tunnelled = await fetch(`http://${wikiHost}/tunnel`, { mode: 'connect' });
  assert.equal(tunnelled.via, 'connect', JSON.stringify(tunnelled));
  assert.equal(tunnelled.status, 200);
  assert.match(tunnelled.body, new RegExp(sites.wiki.token));

  const evilFwd = await fetch(`http://evil.example:${sites.evil.port}/fwd`);
  assert.equal(evilFwd.status, 403, JSON.stringify(evilFwd));
  assert.match(evilFwd.body, /egress denied: evil\.example/);
  assert.match(evilFwd.body, hostDenial('evil.example'));
  assert.match(evilFwd.body, /network\.outbound\.allow_host/);

  const evilConnect = await fetch(`http://evil.example:${sites.evil.port}/tunnel`, { mode: 'connect' });
  assert.equal(evilConnect.via, 'connect-refused', JSON.stringify(evilConnect));
  assert.equal(evilConnect.status, 403);
  assert.match(evilConnect.body, hostDenial('evil.example'));

  const badPort = await fetch(`http://wiki.acmecorp.com:${sites.otherPort.port}/`, { mode: 'connect' });
  assert.equal(badPort.status, 403, JSON.stringify(badPort));
  assert.match(badPort.body, new RegExp(`wiki\\.acmecorp\\.com:${sites.otherPort.port}`));
  assert.match(badPort.body, new RegExp(`port ${sites.otherPort.port} is not in allow_port`));

  // localhost is in NO_PROXY, so the client goes direct: to the CELL's own
  // loopback, where nothing listens (the host's 127.0.0.1 is another machine).
  const local = await fetch(`http://localhost:${sites.wiki.port}/`);
  assert.equal(local.ok, false, `the host's loopback was reached: ${JSON.stringify(local)}`);
  assert.equal(local.code, 'ECONNREFUSED', JSON.stringify(local));

  await finish(s);
  const stderr = s.stderr();

  await t.test('the upstreams saw exactly the allowed requests', () => {
    assert.deepEqual(sites.wiki.requests.map((r) => [r.url, r.host]), [['/fwd', wikiHost], ['/tunnel', wikiHost]]);
    assert.deepEqual(sites.evil.contacts, [], 'evil.example was reached');
    assert.deepEqual(sites.otherPort.contacts, [], 'the port outside allow_port was reached');
  });

  const server = serverName(audit);
  await t.test('audit: forwarded and tunnelled requests, field by field', () => {
    const events = egressEvents(audit, { host: 'wiki.acmecorp.com', port: sites.wiki.port });
    assert.deepEqual(events.map((e) => e.via).sort(), ['connect', 'http'], JSON.stringify(events));
    const rule = `allow_host ".acmecorp.com" + allow_port ${sites.wiki.port}`;
    for (const e of events) assertAllowedEvent(e, { server, via: e.via, host: 'wiki.acmecorp.com', port: sites.wiki.port, rule });
  });

  await t.test('audit: the denials, field by field', () => {
    const evil = egressEvents(audit, { host: 'evil.example' });
    assert.deepEqual(evil.map((e) => e.via).sort(), ['connect', 'http'], JSON.stringify(evil));
    for (const e of evil) {
      assertDeniedEvent(e, { server, via: e.via, host: 'evil.example', port: sites.evil.port, rule: hostDenial('evil.example') });
    }
    const port = egressEvents(audit, { host: 'wiki.acmecorp.com', port: sites.otherPort.port });
    assert.equal(port.length, 1, JSON.stringify(port));
    assertDeniedEvent(port[0], { server, via: 'connect', host: 'wiki.acmecorp.com', port: sites.otherPort.port,
      rule: new RegExp(`port ${sites.otherPort.port} is not in allow_port`) });
  });

  await t.test('stderr: the 403 sentence, once per host', () => {
    const lines = denialLines(stderr, 'evil.example');
    assert.equal(lines.length, 1, `two denials of evil.example, one sentence expected; stderr:\n${stderr}`);
    assert.ok(lines[0].endsWith(evilFwd.body.trim()) || evilFwd.body.includes(lines[0].replace(/^mcpcell: /, '')),
      `stderr and the 403 body differ:\n${lines[0]}\n${evilFwd.body}`);
  });
});

test('egress insecure_allow_all: audit-only mode — a public-looking pinned name is reached and audited, internal addresses still refused', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const secret = newSecret();
  const site = await startUpstream('public', secret);
  t.after(() => site.close());
  const name = 'downloads.example-public.org';
  const sites = { outbound: { insecure_allow_all: true }, resolve: [`${name}:${site.port}:127.0.0.1`] };

  await t.test('built-in fetch (DNS stub + redirect)', async (st) => {
    const { s, fetch, audit } = await startFetchServer(st, FETCH_BUILTIN, sites);
    const r = await fetch(`http://${name}:${site.port}/file`);
    assert.equal(r.ok, true, `${JSON.stringify(r)}; stderr:\n${s.stderr()}`);
    assert.match(r.body, new RegExp(site.token));
    await finish(s);
    const events = egressEvents(audit, { host: name, port: site.port });
    assert.equal(events.length, 1, `the reached site is not audited once: ${JSON.stringify(egressEvents(audit))}`);
    assertAllowedEvent(events[0], { server: serverName(audit), via: 'redirect', host: name, port: site.port,
      rule: 'insecure_allow_all' });
  });

  await t.test('proxy-aware client; an unpinned name resolving to loopback is refused', async (st) => {
    const { s, fetch, audit } = await startFetchServer(st, FETCH_PROXY_AWARE, sites);
    const r = await fetch(`http://${name}:${site.port}/fwd`);
    assert.equal(r.status, 200, `${JSON.stringify(r)}; stderr:\n${s.stderr()}`);
    assert.match(r.body, new RegExp(site.token));
    // "localhost" is the host's loopback, reached only on a port named with
    // --allow-host localhost:PORT, which allow-all does not do: refused
    // (CONNECT: the proxy-aware client would go direct for localhost, NO_PROXY).
    const before = site.requests.length;
    const local = await fetch(`http://localhost:${site.port}/`, { mode: 'connect' });
    assert.notEqual(local.status, 200, `unpinned localhost reached the host's loopback: ${JSON.stringify(local)}`);
    assert.equal(site.requests.length, before, 'the host loopback server got the request');
    await finish(s);
    const reached = egressEvents(audit, { host: name, port: site.port });
    assert.equal(reached.length, 1, JSON.stringify(egressEvents(audit)));
    assertAllowedEvent(reached[0], { server: serverName(audit), via: 'http', host: name, port: site.port,
      rule: 'insecure_allow_all' });
    const refused = egressEvents(audit, { host: 'localhost', port: site.port });
    assert.equal(refused.length, 1, JSON.stringify(egressEvents(audit)));
    assert.equal(refused[0].allowed, false);
    assert.match(refused[0].rule, /loopback/);
  });
});

test('egress: inside an allow-list cell the proxy variables and the resolver point at mcpcell', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const dir = makeTempDir('egress-env');
  const profile = writeProfile(dir, { allow_host: ['.acmecorp.com'], allow_port: [443] });
  const script = `
    const fs = require('fs'), os = require('os');
    let resolv; try { resolv = fs.readFileSync('/etc/resolv.conf', 'utf8'); } catch (e) { resolv = e.code; }
    console.log(JSON.stringify({ env: process.env, resolv, interfaces: Object.keys(os.networkInterfaces()) }));`;
  const r = await runInCell(egressFlags({ profile }), [NODE_BIN, '-e', script]);
  assert.equal(r.code, 0, `mcpcell exit ${r.code}; stderr:\n${r.stderr}`);
  const seen = JSON.parse(r.stdout);
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) {
    assert.equal(seen.env[name], 'http://127.0.0.1:3128', `${name} in the cell: ${seen.env[name]}`);
  }
  for (const name of ['ALL_PROXY', 'all_proxy']) {
    assert.equal(seen.env[name], 'socks5h://127.0.0.1:3128', `${name} in the cell: ${seen.env[name]}`);
  }
  for (const name of ['NO_PROXY', 'no_proxy']) {
    assert.deepEqual((seen.env[name] ?? '').split(',').sort(), ['127.0.0.1', '::1', 'localhost'], `${name}: ${seen.env[name]}`);
  }
  assert.match(seen.resolv, /^nameserver 127\.0\.0\.53$/m, `/etc/resolv.conf in the cell: ${seen.resolv}`);
  assert.doesNotMatch(seen.resolv, /^nameserver (?!127\.0\.0\.53$)/m, 'another resolver is configured in the cell');
  assert.deepEqual(seen.interfaces, ['lo'], 'the cell has an interface besides lo');
});

test('egress over TLS: https to the allowed host works end to end through both paths (redirect and CONNECT), byte counts included', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const certDir = makeTempDir('egress-tls');
  const cert = makeCertificate(certDir, ['wiki.acmecorp.com', 'evil.example']);
  if (!cert.cert) {
    t.skip(cert.reason);
    return;
  }
  const sites = await startStorySites();
  t.after(() => sites.close());
  const secure = await startUpstream('wiki-tls', sites.secret, { tls: cert });
  t.after(() => secure.close());
  const outbound = { ...sites.outbound, allow_port: [...sites.outbound.allow_port, secure.port] };
  const resolve = [...sites.resolve, `wiki.acmecorp.com:${secure.port}:127.0.0.1`];
  // The cell trusts the test certificate (and nothing about the host's store changes).
  const extraArgs = ['--read', certDir, '--env', `NODE_EXTRA_CA_CERTS=${cert.certFile}`];
  const big = 300_000;
  const url = `https://wiki.acmecorp.com:${secure.port}/big?n=${big}`;

  for (const [script, via] of [[FETCH_BUILTIN, 'redirect'], [FETCH_PROXY_AWARE, 'connect']]) {
    await t.test(path.basename(script), async (st) => {
      const before = secure.requests.length;
      const { s, fetch, audit } = await startFetchServer(st, script, sites, { outbound, resolve, extraArgs });
      const r = await fetch(url);
      assert.equal(r.ok, true, `${JSON.stringify(r)}; stderr:\n${s.stderr()}`);
      assert.equal(r.status, 200);
      assert.match(r.body, new RegExp(secure.token));
      const evil = await fetch(`https://evil.example:${sites.evil.port}/`);
      assert.notEqual(evil.status, 200, JSON.stringify(evil));
      await finish(s);
      assert.equal(secure.requests.length, before + 1);
      assert.deepEqual(sites.evil.contacts, []);
      const events = egressEvents(audit, { host: 'wiki.acmecorp.com', port: secure.port });
      assert.equal(events.length, 1, JSON.stringify(egressEvents(audit)));
      assertAllowedEvent(events[0], { server: serverName(audit), via, host: 'wiki.acmecorp.com', port: secure.port,
        rule: `allow_host ".acmecorp.com" + allow_port ${secure.port}` });
      // Everything the upstream sent came through the proxy (plus TLS framing).
      assert.ok(events[0].bytes_in >= big, `bytes_in ${events[0].bytes_in} < the ${big}-byte body`);
      assert.ok(events[0].bytes_out >= 100, `bytes_out ${events[0].bytes_out}: less than a TLS ClientHello`);
    });
  }
});

test('egress with a third-party client (curl in the cell): proxy variables, SOCKS5 and a direct connection all obey the rules', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  // The cell sees the host's /usr read-only, so the host's curl is the cell's.
  if (!['/usr/bin/curl', '/bin/curl'].some((p) => existsSync(p))) {
    t.skip('curl is not installed on this host (apt-get install curl)');
    return;
  }
  const sites = await startStorySites();
  t.after(() => sites.close());
  const dir = makeTempDir('egress-curl');
  const profile = writeProfile(dir, sites.outbound);
  const audit = path.join(dir, 'audit.jsonl');
  const wiki = `wiki.acmecorp.com:${sites.wiki.port}`;
  const evil = `evil.example:${sites.evil.port}`;
  const atlassian = `acmecorp.atlassian.net:${sites.atlassian.port}`;
  const socks = 'socks5h://127.0.0.1:3128';
  // Pins for every port ("*"), and one to an IPv6 address when the host has ::1.
  const v6 = sites.atlassian.dualStack;
  const resolve = ['wiki.acmecorp.com:*:127.0.0.1', `evil.example:*:127.0.0.1`,
    `acmecorp.atlassian.net:*:${v6 ? '[::1]' : '127.0.0.1'}`];
  // One line per case: NAME<TAB>curl's exit status<TAB>HTTP code<TAB>body.
  const cases = {
    forward: `http://${wiki}/curl-forward`,
    socks: `--proxy ${socks} http://${wiki}/curl-socks`,
    direct: `--noproxy * http://${wiki}/curl-direct`,
    evil_forward: `http://${evil}/curl-forward`,
    evil_socks: `--proxy ${socks} http://${evil}/curl-socks`,
    evil_direct: `--noproxy * http://${evil}/curl-direct`,
    pinned_v6: `http://${atlassian}/curl-v6`,
  };
  const script = Object.entries(cases).map(([name, args]) =>
    `out=$(curl -sS --max-time 20 -w '\\t%{http_code}' ${args.replace('*', "'*'")} 2>/dev/null); rc=$?; ` +
    `printf '%s\\t%s\\t%s\\n' ${name} $rc "$(printf '%s' "$out" | tr '\\n' ' ')"`).join('\n');
  const r = await runInCell(egressFlags({ profile, audit, resolve }), ['/bin/sh', '-c', script]);
  const got = Object.fromEntries(r.stdout.trim().split('\n').map((l) => {
    const [name, rc, ...rest] = l.split('\t');
    const code = rest.pop();
    return [name, { rc: Number(rc), code, body: rest.join('\t') }];
  }));
  const show = `${JSON.stringify(got, null, 1)}\nmcpcell exit ${r.code} signal ${r.signal}; stderr:\n${r.stderr}`;
  for (const name of ['forward', 'socks', 'direct', 'pinned_v6']) {
    assert.equal(got[name]?.rc, 0, `${name}: ${show}\nstderr:\n${r.stderr}`);
    assert.equal(got[name].code, '200', show);
    assert.match(got[name].body, new RegExp(name === 'pinned_v6' ? sites.atlassian.token : sites.wiki.token), show);
  }
  const v6Event = egressEvents(audit, { host: 'acmecorp.atlassian.net', port: sites.atlassian.port });
  assert.equal(v6Event.length, 1, JSON.stringify(egressEvents(audit)));
  assert.equal(v6Event[0].address, v6 ? '::1' : '127.0.0.1', 'the pinned address is the one connected to');
  assert.equal(v6Event[0].allowed, true);
  assert.equal(got.evil_forward.code, '403', show);
  assert.match(got.evil_forward.body, /no allow_host entry matches "evil\.example"/, show);
  assert.equal(got.evil_socks.rc, 97, `curl: SOCKS5 refusal is exit 97: ${show}`);
  assert.equal(got.evil_direct.rc, 6, `curl: a name that does not resolve is exit 6: ${show}`);
  assert.deepEqual(sites.evil.contacts, []);
  assert.deepEqual(sites.wiki.requests.map((q) => q.url).sort(), ['/curl-direct', '/curl-forward', '/curl-socks']);
  const vias = egressEvents(audit, { host: 'wiki.acmecorp.com', port: sites.wiki.port, allowed: true }).map((e) => e.via).sort();
  assert.deepEqual(vias, ['http', 'redirect', 'socks5'], JSON.stringify(egressEvents(audit)));
  const denied = egressEvents(audit, { host: 'evil.example', allowed: false }).map((e) => e.via);
  for (const via of ['http', 'socks5', 'dns']) assert.ok(denied.includes(via), `no denied ${via} event: ${JSON.stringify(denied)}`);
  assert.equal(r.code, 0, show);
});

test('egress: a malformed --resolve is a usage error (2) that says what it expects, and runs nothing', { timeout: 60_000 }, async () => {
  const profile = writeProfile(makeTempDir('egress-resolve'), { allow_host: ['.acmecorp.com'] });
  for (const pin of ['nonsense', 'wiki.acmecorp.com:80:not-an-address', 'wiki.acmecorp.com:99999:127.0.0.1']) {
    const r = await runMcpcell(['run', '--isolate', '--relay=off', '--permission-profile', profile, '--resolve', pin, '--',
      NODE_BIN, '-e', 'console.log("ran")']);
    assert.equal(r.code, EXIT.usage, `--resolve ${pin}: exit ${r.code}; stderr:\n${r.stderr}`);
    assert.equal(r.stdout, '', 'the server ran');
    assert.match(r.stderr, /--resolve/);
    assert.match(r.stderr, /HOST:PORT:ADDRESS/);
  }
});
