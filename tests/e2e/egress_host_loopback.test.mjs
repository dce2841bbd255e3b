// The host's own loopback from a cell, port by port (issue 14 item 3). A
// database on the host's 127.0.0.1 was unreachable from a cell, and
// `--allow-host localhost` / `127.0.0.1` were accepted and changed nothing.
// Now `--allow-host localhost:PORT` (or a profile's "allow_host":
// ["localhost"] with "allow_port": [PORT]) reaches the host's 127.0.0.1:PORT
// through mcpcell's egress proxy, audited; a bare "localhost" with no port is
// refused saying what to write; and every other way to the host's loopback
// stays refused (another port, 127.0.0.2, 0.0.0.0, IPv6 forms, numbers in
// disguise, SOCKS5/CONNECT naming it, a name that resolves to it, the proxy's
// own port). The "services" are TCP listeners on the host's loopback that
// answer every connection with a token, so "reached" is seen, not inferred.
// Runs as whoever runs node: root and the normal user mcpcell-test.

import assert from 'node:assert/strict';
import dns from 'node:dns';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { egressEvents, newSecret, writeProfile } from './lib/egress.mjs';
import { EXIT, runInCell, runMcpcell, runArgv, skipWithoutCell } from './lib/mcpcell.mjs';
import { E2E_DIR, NODE_BIN } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const PROBE = path.join(E2E_DIR, 'servers', 'loopback_probe.mjs');

/** A TCP service on the host's `host` (ephemeral port): answers each connection with its token, counts contacts. */
function startService(label, secret, host = '127.0.0.1') {
  const token = `${secret}-${label}`;
  const contacts = [];
  const open = new Set();
  const server = net.createServer((sock) => {
    contacts.push(sock.remoteAddress);
    open.add(sock);
    sock.on('close', () => open.delete(sock));
    sock.on('error', () => {});
    sock.end(`${token}\n`);
  });
  const close = () => new Promise((r) => {
    for (const sock of open) sock.destroy();
    server.close(() => r());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve({ label, token, contacts, port: server.address().port, close }));
  });
}

/** A free port on the host's loopback that nothing listens on (bound, then closed). */
async function unusedPort() {
  const s = await startService('unused', 'x');
  await s.close();
  return s.port;
}

/** Runs the probe in a native cell with `flags`; returns {run, byName}. */
async function probe(flags, cases) {
  const run = await runInCell(flags, [NODE_BIN, PROBE, JSON.stringify({ proxy_port: 3128, cases })], { guardMs: 120_000 });
  const byName = new Map();
  for (const line of run.stdout.split('\n').filter((l) => l.startsWith('{'))) {
    const r = JSON.parse(line);
    byName.set(r.name, r);
  }
  const get = (name) => {
    const r = byName.get(name);
    assert.ok(r, `the probe printed nothing for ${name}; exit ${run.code}; stdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
    return r;
  };
  return { run, get };
}

function assertReached(r, service) {
  assert.equal(r.ok, true, `${r.name} did not connect: ${JSON.stringify(r)}`);
  assert.ok((r.reply ?? '').includes(service.token), `${r.name} did not reach ${service.label}: ${JSON.stringify(r)}`);
}

function assertNotReached(r, services) {
  for (const s of services) {
    assert.ok(!(r.reply ?? '').includes(s.token), `${r.name} REACHED the host's ${s.label} service: ${JSON.stringify(r)}`);
  }
}

test('host loopback: --allow-host localhost:PORT reaches the host\'s 127.0.0.1:PORT from a cell, audited; nothing else on the host\'s loopback does', { timeout: 200_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const secret = newSecret();
  const db = await startService('db', secret);
  const other = await startService('other', secret);
  t.after(async () => {
    await db.close();
    await other.close();
  });
  const dir = makeTempDir('host-loopback');
  const audit = path.join(dir, 'audit.jsonl');
  const cases = [
    // What the user asked for: the named port, however the cell spells the host.
    { name: 'direct_127', via: 'direct', host: '127.0.0.1', port: db.port },
    { name: 'direct_localhost', via: 'direct', host: 'localhost', port: db.port },
    { name: 'lookup_localhost', via: 'lookup', host: 'localhost' },
    // Everything else must stay off the host.
    { name: 'direct_other_port', via: 'direct', host: '127.0.0.1', port: other.port },
    { name: 'direct_127_0_0_2', via: 'direct', host: '127.0.0.2', port: db.port },
    { name: 'direct_v6_loopback', via: 'direct', host: '::1', port: db.port },
    { name: 'direct_0_0_0_0_other', via: 'direct', host: '0.0.0.0', port: other.port },
    { name: 'direct_proxy_port', via: 'direct', host: '127.0.0.1', port: 3128 },
    { name: 'socks5_127_other', via: 'socks5', host: '127.0.0.1', port: other.port, atyp: 'ipv4' },
    { name: 'socks5_localhost_other', via: 'socks5', host: 'localhost', port: other.port },
    { name: 'socks5_127_0_0_2', via: 'socks5', host: '127.0.0.2', port: db.port, atyp: 'ipv4' },
    { name: 'socks5_0_0_0_0', via: 'socks5', host: '0.0.0.0', port: db.port, atyp: 'ipv4' },
    { name: 'socks5_v6_loopback_other', via: 'socks5', host: '::1', port: other.port, atyp: 'ipv6' },
    { name: 'socks5_v4_mapped', via: 'socks5', host: '::ffff:127.0.0.1', port: db.port, atyp: 'ipv6' },
    { name: 'socks5_v4_compatible', via: 'socks5', host: '::127.0.0.1', port: db.port, atyp: 'ipv6' },
    { name: 'socks5_decimal', via: 'socks5', host: '2130706433', port: db.port },
    { name: 'socks5_octal', via: 'socks5', host: '017700000001', port: db.port },
    { name: 'socks5_hex', via: 'socks5', host: '0x7f.1', port: db.port },
    { name: 'socks5_short', via: 'socks5', host: '127.1', port: db.port },
    { name: 'socks5_localhost_localdomain', via: 'socks5', host: 'localhost.localdomain', port: db.port },
    { name: 'socks5_sub_localhost', via: 'socks5', host: 'x.localhost', port: db.port },
    { name: 'socks5_proxy_port', via: 'socks5', host: '127.0.0.1', port: 3128, atyp: 'ipv4' },
    { name: 'connect_127_other', via: 'connect', host: '127.0.0.1', port: other.port },
    { name: 'connect_v6_other', via: 'connect', host: '::1', port: other.port },
    { name: 'connect_proxy_port', via: 'connect', host: 'localhost', port: 3128 },
    { name: 'http_127_other', via: 'http', host: '127.0.0.1', port: other.port },
    { name: 'http_localhost_other', via: 'http', host: 'localhost', port: other.port },
    { name: 'http_v6_other', via: 'http', host: '::1', port: other.port },
  ];
  const { run, get } = await probe(['--allow-host', `localhost:${db.port}`, '--audit-log', audit], cases);
  assert.equal(run.code, 0, `exit ${run.code}; stderr:\n${run.stderr}`);

  await t.test('the named port is reached as 127.0.0.1 and as localhost (which resolves to 127.0.0.1 only)', () => {
    assertReached(get('direct_127'), db);
    assertReached(get('direct_localhost'), db);
    assert.deepEqual(get('lookup_localhost').addresses, ['127.0.0.1']);
  });
  await t.test('direct connects to anything else stay in the cell (its own loopback: refused)', () => {
    for (const name of ['direct_other_port', 'direct_127_0_0_2', 'direct_v6_loopback', 'direct_0_0_0_0_other']) {
      const r = get(name);
      assertNotReached(r, [db, other]);
      assert.equal(r.ok, false, JSON.stringify(r));
      // ::1 is the cell's own too (or absent where IPv6 is off).
      const expected = name === 'direct_v6_loopback' ? /^(ECONNREFUSED|EADDRNOTAVAIL|ENETUNREACH)$/ : /^ECONNREFUSED$/;
      assert.match(r.errno, expected, JSON.stringify(r));
    }
  });
  await t.test('the proxy\'s own port is the cell\'s proxy, not the host\'s 3128', () => {
    const r = get('direct_proxy_port');
    assertNotReached(r, [db, other]);
  });
  await t.test('SOCKS5, CONNECT and plain HTTP naming the host\'s loopback another way or on another port: refused', () => {
    for (const c of cases.filter((x) => x.via === 'socks5')) {
      const r = get(c.name);
      assertNotReached(r, [db, other]);
      assert.equal(r.ok, false, JSON.stringify(r));
      assert.ok(r.socks_reply !== undefined && r.socks_reply !== 0, JSON.stringify(r));
    }
    for (const c of cases.filter((x) => x.via === 'connect' || x.via === 'http')) {
      const r = get(c.name);
      assertNotReached(r, [db, other]);
      assert.ok(r.status >= 400 && r.status < 500, JSON.stringify(r));
    }
  });
  await t.test('the host\'s services saw only the allowed connections', () => {
    assert.equal(db.contacts.length, 2, `db contacts: ${JSON.stringify(db.contacts)}`);
    assert.deepEqual(other.contacts, [], 'the unnamed port was reached');
  });
  await t.test('audit: the reached port as an allowed egress event, a refusal names what to write', () => {
    const allowed = egressEvents(audit, { host: '127.0.0.1', port: db.port, allowed: true });
    assert.equal(allowed.length, 2, JSON.stringify(egressEvents(audit)));
    for (const e of allowed) {
      assert.equal(e.via, 'redirect');
      assert.equal(e.address, '127.0.0.1');
      assert.match(e.rule, new RegExp(`allow_host "localhost:${db.port}" \\(the host's loopback\\)`));
      assert.ok(e.bytes_in > 0, JSON.stringify(e));
    }
    const refused = egressEvents(audit, { host: '127.0.0.1', port: other.port, via: 'socks5' });
    assert.equal(refused.length, 1, JSON.stringify(egressEvents(audit)));
    assert.equal(refused[0].allowed, false);
    assert.match(refused[0].rule, /host's loopback, which is refused unless the port is named/);
    assert.match(refused[0].how_to_allow, new RegExp(`--allow-host localhost:${other.port}`));
    const mapped = egressEvents(audit, { host: '::ffff:127.0.0.1', port: db.port });
    assert.equal(mapped.length, 1, JSON.stringify(egressEvents(audit)));
    assert.match(mapped[0].rule, /allows no outbound host or port/);
  });
  await t.test('stderr says what was allowed', () => {
    assert.match(run.stderr, new RegExp(`the host's loopback on localhost:${db.port} only`));
  });
});

test('host loopback: a profile\'s "localhost" with allow_port reaches those ports and opens no other host on them', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const secret = newSecret();
  const db = await startService('db', secret);
  t.after(() => db.close());
  const dir = makeTempDir('host-loopback-profile');
  const profile = writeProfile(dir, { allow_host: ['localhost'], allow_port: [db.port] });
  const audit = path.join(dir, 'audit.jsonl');
  const { run, get } = await probe(['--permission-profile', profile, '--audit-log', audit, '--resolve', `public.example:${db.port}:203.0.113.9`], [
    { name: 'direct_127', via: 'direct', host: '127.0.0.1', port: db.port },
    // "localhost" + allow_port [P] is not "any host on P".
    { name: 'socks5_public', via: 'socks5', host: 'public.example', port: db.port },
  ]);
  assert.equal(run.code, 0, run.stderr);
  assertReached(get('direct_127'), db);
  const pub = get('socks5_public');
  assert.equal(pub.ok, false, JSON.stringify(pub));
  assert.equal(pub.socks_reply, 2, JSON.stringify(pub));
  const e = egressEvents(audit, { host: 'public.example' });
  assert.equal(e.length, 1, JSON.stringify(egressEvents(audit)));
  assert.match(e[0].rule, /allows no outbound host or port/);
});

test('host loopback: a name the host resolves to 127.0.0.1 (rebinding) is refused even on the named port', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  // This machine's own name: /etc/hosts commonly maps it to 127.0.x.1.
  const name = os.hostname().toLowerCase();
  let addresses = [];
  try {
    addresses = (await dns.promises.lookup(name, { all: true })).map((a) => a.address);
  } catch {
    // handled below
  }
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(name) || !addresses.some((a) => a.startsWith('127.'))) {
    t.skip(`this host's name ${JSON.stringify(name)} does not resolve to 127.x here (${JSON.stringify(addresses)}); ` +
      'egress_bypass.test.mjs (as root) covers rebinding with a private /etc/hosts');
    return;
  }
  const secret = newSecret();
  const db = await startService('db', secret);
  t.after(() => db.close());
  const dir = makeTempDir('host-loopback-rebind');
  const audit = path.join(dir, 'audit.jsonl');
  const { run, get } = await probe(['--allow-host', `localhost:${db.port}`, '--allow-host', name, '--audit-log', audit], [
    { name: 'socks5_rebind', via: 'socks5', host: name, port: db.port },
    { name: 'connect_rebind', via: 'connect', host: name, port: db.port },
  ]);
  assert.equal(run.code, 0, run.stderr);
  assertNotReached(get('socks5_rebind'), [db]);
  assertNotReached(get('connect_rebind'), [db]);
  assert.deepEqual(db.contacts, []);
  for (const e of egressEvents(audit, { host: name })) {
    assert.equal(e.allowed, false, JSON.stringify(e));
    assert.match(e.rule, /loopback/);
  }
});

test('host loopback: entries that would be accepted and ignored, or mean more than one port, are refused with what to write', async (t) => {
  const refusals = [
    [['--allow-host', 'localhost'], /"localhost" names the host's loopback.*--allow-host localhost:5432/],
    [['--allow-host', '127.0.0.1'], /"127\.0\.0\.1" names the host's loopback.*--allow-host 127\.0\.0\.1:5432/],
    [['--allow-host', '::1'], /names the host's loopback.*\[::1\]:5432/],
    [['--allow-host', '127.0.0.2:5432'], /127\.0\.0\.2 leads to this machine itself.*localhost:5432/],
    [['--allow-host', '0.0.0.0'], /0\.0\.0\.0 leads to this machine itself/],
    [['--allow-host', '[::ffff:127.0.0.1]:5432'], /::ffff:127\.0\.0\.1 leads to this machine itself/],
    [['--allow-host', '::'], /:: leads to this machine itself/],
    [['--allow-host', 'localhost:3128'], /port 3128 is the cell's own egress proxy port/],
    [['--allow-host', 'localhost:0'], /port after ':' must be a number 1-65535/],
    [['--allow-host', 'localhost:70000'], /port after ':' must be a number 1-65535/],
    [['--allow-host', 'localhost:5432x'], /port after ':' must be a number 1-65535/],
    [['--allow-host', 'example.com:443'], /only the host's loopback takes a port here/],
  ];
  for (const [flags, message] of refusals) {
    const r = await runMcpcell(runArgv([...flags, '--dry-run'], [NODE_BIN, '-e', '0']));
    assert.equal(r.code, EXIT.usage, `${flags.join(' ')} was accepted (exit ${r.code}); stderr:\n${r.stderr}`);
    assert.match(r.stderr, message, flags.join(' '));
  }
  await t.test('a profile\'s bare "localhost" without allow_port is refused, naming the fields', async () => {
    const dir = makeTempDir('host-loopback-refuse');
    const profile = writeProfile(dir, { allow_host: ['localhost', 'api.example.com'] });
    const r = await runMcpcell(runArgv(['--permission-profile', profile, '--dry-run'], [NODE_BIN, '-e', '0']));
    assert.equal(r.code, EXIT.usage, r.stderr);
    assert.match(r.stderr, /network\.outbound\.allow_port/);
    assert.match(r.stderr, /localhost:5432/);
  });
  await t.test('a profile entry "localhost:PORT" and the flag show in --dry-run', async () => {
    const dir = makeTempDir('host-loopback-dry');
    const profile = writeProfile(dir, { allow_host: ['localhost:6379'] });
    const r = await runMcpcell(runArgv(['--permission-profile', profile, '--allow-host', '[::1]:5432', '--dry-run'], [NODE_BIN, '-e', '0']));
    assert.equal(r.code, 0, r.stderr);
    const plan = JSON.parse(r.stdout);
    assert.deepEqual(plan.cell.network.host_loopback_ports, [{ host: 'localhost', port: 6379 }, { host: '::1', port: 5432 }]);
    assert.deepEqual(plan.cell.network.allow_hosts, []);
    assert.equal(plan.cell.network.mode, 'allow-list');
  });
});
