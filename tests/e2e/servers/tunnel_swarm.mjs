// tunnel_swarm: run in an allow-list cell by load.test.mjs. Opens N
// tunnels through the cell's egress proxy to TARGET (host:port, an echo
// server on the host), holds ALL of them open until every one is
// established (so the proxy carries N at once), then sends each its own
// payload and reads it back. Prints one JSON line:
//   {"tunnels": N, "established": E, "echoed": K, "failures": [first few reasons]}
//
// Usage: tunnel_swarm.mjs N TARGET PAYLOAD_BYTES [connect|direct]
//   connect  HTTP CONNECT to the proxy at 127.0.0.1:3128 (a proxy-aware client)
//   direct   resolve the host (the cell's DNS stub answers a stand-in
//            address) and connect to it: the cell's nft rule redirects the
//            connection to the proxy (a client that ignores proxies)
// Every wait is bounded by the test's own guard (mcpcell is killed when it
// fires); here a tunnel fails only on an error or a wrong answer.

import { createHash } from 'node:crypto';
import dns from 'node:dns/promises';
import net from 'node:net';

const [n, target, payloadBytes] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4])];
const mode = process.argv[5] ?? 'connect';
const failures = [];
const fail = (i, why) => {
  if (failures.length < 10) failures.push(`tunnel ${i}: ${why}`);
};

/** Tunnel i's payload: distinct per tunnel, so a crossed tunnel is caught too. */
function payload(i) {
  const out = Buffer.alloc(payloadBytes);
  let block = createHash('sha256').update(`tunnel-${i}`).digest();
  for (let off = 0; off < payloadBytes; off += block.length) {
    block.copy(out, off);
    block = createHash('sha256').update(block).digest();
  }
  return out;
}

/** Connects straight to the target's (stand-in) address; resolves to the socket once connected (null on failure). */
function connectDirect(i, address, port) {
  return new Promise((resolve) => {
    const sock = net.connect(port, address);
    sock.once('connect', () => {
      sock.pause();
      resolve(sock);
    });
    sock.on('error', (e) => {
      fail(i, `connect: ${e.code ?? e.message}`);
      resolve(null);
    });
  });
}

/** Connects and sends CONNECT; resolves to the socket once the proxy answered 200 (null on failure). */
function establish(i) {
  return new Promise((resolve) => {
    const sock = net.connect(3128, '127.0.0.1');
    let head = Buffer.alloc(0);
    const onData = (d) => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      sock.off('data', onData);
      const status = head.subarray(0, end).toString('latin1').split('\r\n')[0];
      if (!/^HTTP\/1\.[01] 200/.test(status)) {
        fail(i, `proxy answered ${JSON.stringify(status)}`);
        sock.destroy();
        resolve(null);
        return;
      }
      if (head.length > end + 4) fail(i, 'bytes after the 200 before we sent anything');
      sock.pause();
      resolve(sock);
    };
    sock.on('data', onData);
    sock.on('error', (e) => {
      fail(i, `establish: ${e.code ?? e.message}`);
      resolve(null);
    });
    sock.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  });
}

/** Sends tunnel i's payload, half-closes, reads the echo to EOF; resolves true when byte-identical. */
function echo(i, sock) {
  return new Promise((resolve) => {
    const want = payload(i);
    const chunks = [];
    sock.on('data', (d) => chunks.push(d));
    sock.on('error', (e) => fail(i, `echo: ${e.code ?? e.message}`));
    sock.on('close', () => {
      const got = Buffer.concat(chunks);
      const same = got.equals(want);
      if (!same) fail(i, `echoed ${got.length} bytes, sent ${want.length}, identical prefix: ${got.subarray(0, want.length).equals(want.subarray(0, got.length))}`);
      resolve(same);
    });
    sock.resume();
    sock.end(want);
  });
}

let open = establish;
if (mode === 'direct') {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const { address } = await dns.lookup(host, { family: 4 });
  open = (i) => connectDirect(i, address, port);
}
// A redirected connection is "established" once the kernel accepted it on
// the cell's side; the proxy's upstream connect happens behind it. Holding
// every socket until all are open still makes the proxy carry N at once: no
// payload is sent before that.
const socks = await Promise.all(Array.from({ length: n }, (_, i) => open(i)));
const established = socks.filter(Boolean).length;
const results = await Promise.all(socks.map((s, i) => (s ? echo(i, s) : false)));
process.stdout.write(JSON.stringify({ tunnels: n, established, echoed: results.filter(Boolean).length, failures }) + '\n');
