// Sends raw HTTP requests, byte for byte as given, to the cell's egress proxy
// and prints one JSON line per request: {name, status, body} (body: the
// first 200 bytes after the head). For request-smuggling attempts that an
// HTTP library would never send. Usage: node raw_proxy_client.mjs JSON
//   JSON = {"port": 3128, "cases": {"name": "raw request text", ...}}
// Each request waits at most 8 s for the proxy to close the connection.

import net from 'node:net';

const { port, cases } = JSON.parse(process.argv[2]);

function send(text) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let out = Buffer.alloc(0);
    const done = () => resolve(out.toString('latin1'));
    sock.setTimeout(8000, () => sock.destroy());
    sock.on('connect', () => sock.write(Buffer.from(text, 'latin1')));
    sock.on('data', (d) => (out = Buffer.concat([out, d])));
    sock.on('close', done);
    sock.on('error', done);
  });
}

for (const [name, text] of Object.entries(cases)) {
  const reply = await send(text);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(reply)?.[1] ?? 0);
  const at = reply.indexOf('\r\n\r\n');
  console.log(JSON.stringify({ name, status, body: at < 0 ? reply.slice(0, 200) : reply.slice(at + 4, at + 204) }));
}
