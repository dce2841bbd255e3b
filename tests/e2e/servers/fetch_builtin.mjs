// A fetch MCP server that uses Node's built-in fetch (undici), which ignores
// HTTP_PROXY/HTTPS_PROXY/ALL_PROXY: inside an allow-list cell its name lookups
// go to the cell's DNS stub and its connections are redirected to mcpcell's
// proxy. Like the many real fetch servers written this way.

import { serveFetchTool } from './fetch_common.mjs';

/** A safety net so a silently dropped connection ends the call; not a measurement. */
const GUARD_MS = 20_000;

await serveFetchTool('fetch-builtin', "GET a URL with Node's built-in fetch (ignores proxy variables)", async (args) => {
  const res = await fetch(args.url, { headers: args.headers ?? {}, redirect: 'manual', signal: AbortSignal.timeout(GUARD_MS) });
  return { status: res.status, body: await res.text(), via: 'builtin-fetch' };
});
