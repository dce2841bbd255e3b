// init_time.mjs: spawn → initialize reply of an MCP stdio server, bare and in a cell.
//
//   node init_time.mjs RUNS MCPCELL NODE_MODULES     (MCPCELL_BASELINE=path: a second mcpcell, same run)
//
// The server is NODE_MODULES/@modelcontextprotocol/server-everything/dist/index.js; the cell gets
// NODE_MODULES readable (its imports live there), as the e2e tests do (tests/e2e/lib/paths.mjs).
// Each run spawns the server, writes one `initialize` request line at once (the client does not wait
// for anything first, like the SDK's StdioClientTransport) and stops the clock when the reply line
// with the same id arrives on stdout. Then the server is asked to stop the MCP way (stdin closed) and
// reaped before the next run, SIGKILL after 5 s. Configs are interleaved run by run so machine drift
// hits both alike. Both get the same small environment (PATH, HOME, LANG): FACTS.md notes
// node's start-up grows with variables such as NODE_EXTRA_CA_CERTS, and mcpcell clears the
// environment anyway, so a bare run with the host's full environment would not be comparable.
// Prints a Markdown table: median, p90, min in ms, overhead over bare and ratio. No thresholds.
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import path from "node:path";

const [runsArg, mcpcell, nodeModules] = process.argv.slice(2);
const runs = Number(runsArg);
if (!Number.isInteger(runs) || runs < 1 || !mcpcell || !nodeModules) {
  console.error("usage: node init_time.mjs RUNS MCPCELL NODE_MODULES");
  process.exit(2);
}
const serverJs = path.join(nodeModules, "@modelcontextprotocol/server-everything/dist/index.js");
const cellReads = ["--read", nodeModules];
// node outside the system directories (e.g. /opt/node/bin/node) needs its prefix readable too.
const nodePrefix = path.dirname(path.dirname(process.execPath));
if (!["/usr", "/bin", "/lib", "/lib64"].some((d) => process.execPath.startsWith(d + "/"))) {
  cellReads.push("--read", nodePrefix);
}

const env = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: process.env.HOME ?? "/root", LANG: "C.UTF-8" };
const node = process.execPath;
const configs = [
  { label: "bare (node server-everything)", cmd: node, args: [serverJs] },
  { label: "mcpcell run --isolate", cmd: mcpcell, args: ["run", "--isolate", ...cellReads, "--", node, serverJs] },
];
// MCPCELL_BASELINE=path: another mcpcell (an older build) measured in the same run, for a before/after.
if (process.env.MCPCELL_BASELINE) {
  configs.push({
    label: `mcpcell run --isolate (baseline ${path.basename(path.dirname(process.env.MCPCELL_BASELINE))}/${path.basename(process.env.MCPCELL_BASELINE)})`,
    cmd: process.env.MCPCELL_BASELINE,
    args: ["run", "--isolate", ...cellReads, "--", node, serverJs],
  });
}

// MCPCELL_RELAY_OFF=1: the same cell with --relay=off too, to tell the relay's share from the cell's.
if (process.env.MCPCELL_RELAY_OFF === "1") {
  configs.push({
    label: "mcpcell run --isolate --relay=off",
    cmd: mcpcell,
    args: ["run", "--isolate", "--relay=off", ...cellReads, "--", node, serverJs],
  });
}

const initialize =
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "mcpcell-bench", version: "0" },
    },
  }) + "\n";

function once(cfg) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cfg.cmd, cfg.args, { env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let elapsed = null;
    const killer = setTimeout(() => child.kill("SIGKILL"), 30000);
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      if (elapsed !== null) return;
      out += d;
      const nl = out.indexOf("\n");
      if (nl < 0) return;
      elapsed = performance.now() - t0;
      let msg;
      try {
        msg = JSON.parse(out.slice(0, nl));
      } catch (e) {
        return reject(new Error(`${cfg.label}: first stdout line is not JSON: ${out.slice(0, 200)}`));
      }
      if (msg.id !== 1 || !msg.result) {
        return reject(new Error(`${cfg.label}: not an initialize result: ${out.slice(0, 200)}`));
      }
      child.stdin.end();
      setTimeout(() => child.kill("SIGKILL"), 5000).unref();
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(killer);
      if (elapsed === null) {
        reject(new Error(`${cfg.label}: exited (${code ?? signal}) before replying; stderr: ${err.slice(-500)}`));
      } else {
        resolve(elapsed);
      }
    });
    child.stdin.write(initialize);
  });
}

const median = (s) => (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2);
const p90 = (s) => s[Math.min(s.length - 1, Math.ceil(0.9 * s.length) - 1)];

// One untimed warm-up of each (page cache, node's compile cache).
for (const cfg of configs) await once(cfg);
const times = configs.map(() => []);
for (let r = 0; r < runs; r++) {
  for (let k = 0; k < configs.length; k++) times[k].push(await once(configs[k]));
}

console.log(`| spawn → initialize reply, server-everything (${runs} runs each, interleaved) | median ms | p90 ms | min ms | over bare ms | × bare |`);
console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
const base = median([...times[0]].sort((a, b) => a - b));
configs.forEach((cfg, k) => {
  const s = [...times[k]].sort((a, b) => a - b);
  const m = median(s);
  const over = m - base;
  console.log(
    `| ${cfg.label} | ${m.toFixed(1)} | ${p90(s).toFixed(1)} | ${s[0].toFixed(1)} | ${over >= 0 ? "+" : ""}${over.toFixed(1)} | ${(m / base).toFixed(2)} |`,
  );
});
