// rpc_pump: the far end of the load tests' JSON-RPC streams (load.test.mjs),
// run in a cell. Two modes:
//
//   rpc_pump.mjs echo         every byte of stdin back on stdout, in order;
//                             at EOF one more line, a summary notification
//                             {"method":"pump/summary","params":{"bytes":N,"sha256":H}}
//                             of what arrived, so the host checks the
//                             client→server direction on its own too.
//   rpc_pump.mjs emit N SEED  N notifications made by rpcMessage(i, SEED)
//                             (lib/rpc_stream.mjs), i = 0..N-1, then exits.
//
// Both stream with backpressure: nothing holds more than a pipe's worth.

import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable, Transform } from 'node:stream';

import { rpcMessages } from '../lib/rpc_stream.mjs';

const [mode, count, seed] = process.argv.slice(2);

if (mode === 'echo') {
  const hash = createHash('sha256');
  let bytes = 0;
  const tap = new Transform({
    transform(chunk, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
    flush(done) {
      const summary = { jsonrpc: '2.0', method: 'pump/summary', params: { bytes, sha256: hash.digest('hex') } };
      done(null, JSON.stringify(summary) + '\n');
    },
  });
  await pipeline(process.stdin, tap, process.stdout);
} else if (mode === 'emit') {
  await pipeline(Readable.from(rpcMessages(Number(count), seed)), process.stdout);
} else {
  process.stderr.write('usage: rpc_pump.mjs echo | emit N SEED\n');
  process.exit(2);
}
