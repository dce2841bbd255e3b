// Deterministic JSON-RPC message streams for the load tests: both ends make
// message i from (i, seed) alone, so neither side holds the stream in memory
// and a lost, reordered, duplicated or altered message is caught at its index.

import { createHash } from 'node:crypto';

// Characters that a careless relay would mangle: multi-byte UTF-8 (2, 3 and 4
// bytes, so chunk boundaries split code points), JSON escapes, and U+2028
// (a line separator to JavaScript, not to JSON-RPC's newline framing).
const ALPHABET = ['a', 'Z', '0', ' ', 'é', '中', '😀', '\\"', '\\\\', '\\n', '\\u0000', '\u2028', '{', '}'];

/** Message i of the stream `seed` (one line, newline included): requests, notifications, responses. */
export function rpcMessage(i, seed) {
  // A small LCG from (i, seed): varied lengths and contents, no state.
  let x = (i * 2654435761 + seed.length * 40503 + seed.charCodeAt(0)) >>> 0;
  const len = x % 24;
  let data = '';
  for (let k = 0; k < len; k++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    data += ALPHABET[(x >>> 16) % ALPHABET.length];
  }
  switch (i % 3) {
    case 0:
      return `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"${seed}","arguments":{"d":"${data}"}}}\n`;
    case 1:
      return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${i},"progress":${i},"message":"${data}"}}\n`;
    default:
      return `{"jsonrpc":"2.0","id":"r-${i}","result":{"content":[{"type":"text","text":"${data}"}]}}\n`;
  }
}

/** Messages 0..count-1 in batches of up to 1,000 lines (one string each): for Readable.from. */
export function* rpcMessages(count, seed) {
  const batch = 1000;
  for (let start = 0; start < count; start += batch) {
    let s = '';
    for (let i = start; i < Math.min(count, start + batch); i++) s += rpcMessage(i, seed);
    yield s;
  }
}

/**
 * Checks a stream of lines against messages 0..count-1 of `seed`, chunk by
 * chunk (utf8 strings). `feed(chunk)` for each chunk; `finish()` returns
 * { received, firstMismatch, extraLines, sha256 } where firstMismatch is
 * {index, expected, got} or null, and extraLines are the lines after the
 * expected ones (e.g. a summary).
 */
export function lineChecker(count, seed) {
  let partial = '';
  let received = 0;
  let firstMismatch = null;
  const extraLines = [];
  const hash = createHash('sha256');
  const line = (text) => {
    if (received >= count) {
      extraLines.push(text);
      return;
    }
    const expected = rpcMessage(received, seed);
    const got = text + '\n';
    hash.update(got);
    if (firstMismatch === null && got !== expected) firstMismatch = { index: received, expected, got };
    received += 1;
  };
  return {
    feed(chunk) {
      partial += chunk;
      let start = 0;
      for (let nl = partial.indexOf('\n'); nl >= 0; nl = partial.indexOf('\n', start)) {
        line(partial.slice(start, nl));
        start = nl + 1;
      }
      partial = partial.slice(start);
    },
    finish() {
      if (partial.length) extraLines.push(`(unterminated) ${partial.slice(0, 200)}`);
      return { received, firstMismatch, extraLines, sha256: hash.digest('hex') };
    },
  };
}

/** sha256 (hex) and byte count of messages 0..count-1 of `seed`, computed without holding them. */
export function streamDigest(count, seed) {
  const hash = createHash('sha256');
  let bytes = 0;
  for (const s of rpcMessages(count, seed)) {
    hash.update(s);
    bytes += Buffer.byteLength(s);
  }
  return { sha256: hash.digest('hex'), bytes };
}
