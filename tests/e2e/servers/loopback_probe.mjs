// Tries TCP connections from inside a cell and prints one JSON line per
// attempt: {name, ok, reply, errno, socks_reply, status}. For the host
// loopback tests (issue 14 item 3): the listeners on the host answer every
// connection with their token, so `reply` says which one (if any) was reached.
// Usage: node loopback_probe.mjs JSON
//   JSON = {"proxy_port": 3128, "cases": [{"name", "via", "host", "port", "atyp"?}]}
//   via: "direct"  net.connect(host, port) (the kernel's redirect decides)
//        "socks5"  SOCKS5 CONNECT through the cell's proxy; atyp "domain" (default), "ipv4", "ipv6"
//        "connect" HTTP CONNECT host:port through the cell's proxy
//        "http"    plain HTTP forwarding (GET http://host:port/) through the cell's proxy
//        "lookup"  dns.lookup(host, {all: true}) (the cell's resolver)
// Every attempt gives up after 8 s.

import dns from 'node:dns';
import net from 'node:net';

const { proxy_port: proxyPort = 3128, cases } = JSON.parse(process.argv[2]);

/** Collects what a socket sends until it closes, errors or 8 s pass. */
function collect(sock, first = Buffer.alloc(0)) {
  return new Promise((resolve) => {
    let out = first;
    const timer = setTimeout(() => sock.destroy(), 8000);
    sock.on('data', (d) => (out = Buffer.concat([out, d])));
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(out.toString('latin1'));
    });
    sock.on('error', () => {});
  });
}

function direct({ host, port }) {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    sock.setTimeout(8000, () => sock.destroy(new Error('timeout')));
    sock.once('error', (e) => resolve({ ok: false, errno: e.code ?? e.message }));
    sock.once('connect', async () => {
      sock.write('hello\n');
      resolve({ ok: true, reply: await collect(sock) });
    });
  });
}

function socksAddress(host, atyp) {
  if (atyp === 'ipv4') return Buffer.from([0x01, ...host.split('.').map(Number)]);
  if (atyp === 'ipv6') {
    const full = new net.SocketAddress({ address: host, family: 'ipv6' });
    const groups = expandV6(full.address);
    return Buffer.from([0x04, ...groups.flatMap((g) => [g >> 8, g & 0xff])]);
  }
  const name = Buffer.from(host, 'latin1');
  return Buffer.concat([Buffer.from([0x03, name.length]), name]);
}

/** Eight 16-bit groups of an IPv6 address (handles '::' and a dotted IPv4 tail). */
function expandV6(text) {
  let t = text;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(t);
  if (v4) {
    const o = v4[1].split('.').map(Number);
    t = t.slice(0, -v4[1].length) + `${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;
  }
  const [head, tail] = t.includes('::') ? t.split('::') : [t, null];
  const h = head ? head.split(':') : [];
  const tl = tail ? tail.split(':') : [];
  const zeros = tail === null ? [] : Array(8 - h.length - tl.length).fill('0');
  return [...h, ...zeros, ...tl].map((g) => parseInt(g, 16));
}

function socks5({ host, port, atyp = 'domain' }) {
  return new Promise((resolve) => {
    const sock = net.connect(proxyPort, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let stage = 'greeting';
    const timer = setTimeout(() => sock.destroy(), 8000);
    sock.on('error', (e) => resolve({ ok: false, errno: e.code }));
    sock.on('close', () => {
      clearTimeout(timer);
      resolve({ ok: false, stage, errno: 'closed' });
    });
    sock.on('connect', () => sock.write(Buffer.from([0x05, 0x01, 0x00])));
    sock.on('data', async (d) => {
      buf = Buffer.concat([buf, d]);
      if (stage === 'greeting' && buf.length >= 2) {
        buf = buf.subarray(2);
        stage = 'request';
        const p = Buffer.from([port >> 8, port & 0xff]);
        sock.write(Buffer.concat([Buffer.from([0x05, 0x01, 0x00]), socksAddress(host, atyp), p]));
      } else if (stage === 'request' && buf.length >= 2) {
        const code = buf[1];
        stage = 'done';
        sock.removeAllListeners('data');
        sock.removeAllListeners('close');
        clearTimeout(timer);
        if (code !== 0) {
          sock.destroy();
          resolve({ ok: false, socks_reply: code });
          return;
        }
        // The rest of the reply (bound address) is not needed: the listeners'
        // tokens are plain text after it.
        sock.write('hello\n');
        resolve({ ok: true, socks_reply: 0, reply: await collect(sock, buf) });
      }
    });
  });
}

function connect({ host, port }) {
  return new Promise((resolve) => {
    const sock = net.connect(proxyPort, '127.0.0.1');
    const authority = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    sock.on('error', (e) => resolve({ ok: false, errno: e.code }));
    sock.on('connect', async () => {
      sock.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
      let head = Buffer.alloc(0);
      sock.on('data', (d) => (head = Buffer.concat([head, d])));
      const whole = await new Promise((r) => {
        const timer = setTimeout(() => sock.destroy(), 8000);
        const check = () => {
          const text = head.toString('latin1');
          if (/^HTTP\/1\.[01] 200/.test(text) && text.includes('\r\n\r\n')) {
            clearTimeout(timer);
            sock.removeListener('data', check);
            r(text);
          }
        };
        sock.on('data', check);
        sock.on('close', () => {
          clearTimeout(timer);
          r(head.toString('latin1'));
        });
      });
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(whole)?.[1] ?? 0);
      if (status !== 200) {
        sock.destroy();
        resolve({ ok: false, status, reply: whole.slice(whole.indexOf('\r\n\r\n') + 4, 400) });
        return;
      }
      sock.removeAllListeners('data');
      sock.write('hello\n');
      resolve({ ok: true, status, reply: await collect(sock, Buffer.from(whole.slice(whole.indexOf('\r\n\r\n') + 4), 'latin1')) });
    });
  });
}

/** Plain HTTP forwarding: an absolute-form request for http://host:port/ to the cell's proxy. */
function http({ host, port }) {
  return new Promise((resolve) => {
    const sock = net.connect(proxyPort, '127.0.0.1');
    const authority = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    sock.on('error', (e) => resolve({ ok: false, errno: e.code }));
    sock.on('connect', async () => {
      sock.write(`GET http://${authority}/ HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`);
      const whole = await collect(sock);
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(whole)?.[1] ?? 0);
      resolve({ ok: status === 200, status, reply: whole.slice(0, 400) });
    });
  });
}

async function lookup({ host }) {
  try {
    const all = await dns.promises.lookup(host, { all: true });
    return { ok: true, addresses: all.map((a) => a.address) };
  } catch (e) {
    return { ok: false, errno: e.code };
  }
}

const ways = { direct, socks5, connect, http, lookup };
for (const c of cases) {
  const r = await ways[c.via](c);
  console.log(JSON.stringify({ name: c.name, ...r }));
}
