// A minimal WebDriver (W3C) client for the peers harness: starts chromedriver or geckodriver,
// opens the harness page headless, waits until window.__peers.state is 'done' or 'error',
// writes the result JSON and prints a summary. Node's own fetch and child_process only.
//
//   node driver.mjs --browser chromium|firefox --url URL --out FILE [--timeout-s N]
//
// Exit code: 0 when the page finished and nothing failed, 1 otherwise.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const browser = args.browser;
const timeoutS = Number(args['timeout-s'] ?? 3600);
if (!['chromium', 'firefox'].includes(browser) || !args.url || !args.out) {
  console.error('usage: node driver.mjs --browser chromium|firefox --url URL --out FILE [--timeout-s N]');
  process.exit(2);
}

// The flags bench-runner uses (bench-runner/src/drive.rs CHROMIUM_ARGS).
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
  '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// Firefox prefs for automated runs: the page-thumbnail service of a fresh profile may load the
// page a second time in another storage context (which would race for the OPFS handles);
// telemetry and first-run pages add background work.
const FIREFOX_PREFS = {
  'browser.pagethumbnails.capturing_disabled': true,
  'browser.startup.homepage_override.mstone': 'ignore',
  'browser.shell.checkDefaultBrowser': false,
  'datareporting.policy.dataSubmissionEnabled': false,
  'toolkit.telemetry.reportingpolicy.firstRun': false,
  'browser.newtabpage.enabled': false,
  'browser.startup.page': 0,
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

async function startDriver(logFile) {
  const port = await freePort();
  const [cmd, argv] = browser === 'chromium'
    ? [process.env.CHROMEDRIVER_BIN ?? '/usr/bin/chromedriver', [`--port=${port}`]]
    : [process.env.GECKODRIVER_BIN ?? 'geckodriver', ['--port', String(port), '--marionette-port', '0']];
  const fd = openSync(logFile, 'w');
  const child = spawn(cmd, argv, { stdio: ['ignore', fd, fd] });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i++) {
    if (child.exitCode !== null) throw new Error(`${cmd} exited with ${child.exitCode} (log: ${logFile})`);
    try {
      const r = await fetch(`${base}/status`);
      if (r.ok && (await r.json()).value?.ready) return { child, base };
    } catch { /* not listening yet */ }
    await sleep(200);
  }
  child.kill();
  throw new Error(`${cmd} did not become ready in 30 s (log: ${logFile})`);
}

async function wd(base, method, path, body) {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await r.json();
  if (!r.ok) throw new Error(`WebDriver ${method} ${path}: ${json.value?.error}: ${json.value?.message}`);
  return json.value;
}

const profile = mkdtempSync(join(tmpdir(), `peers-${browser}-`));
const { child, base } = await startDriver(`${args.out}.${browser === 'chromium' ? 'chromedriver' : 'geckodriver'}.log`);
let session = null;
let exitCode = 1;
// Stopped from outside: end the browser session and the driver rather than orphan them.
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, async () => {
    if (session) await wd(base, 'DELETE', `/session/${session}`).catch(() => {});
    child.kill();
    rmSync(profile, { recursive: true, force: true });
    process.exit(130);
  });
}
try {
  const caps = browser === 'chromium'
    ? { browserName: 'chrome', 'goog:chromeOptions': { binary: process.env.CHROMIUM_BIN ?? '/usr/bin/chromium', args: [...CHROMIUM_ARGS, `--user-data-dir=${profile}`] } }
    : { browserName: 'firefox', 'moz:firefoxOptions': { binary: process.env.FIREFOX_BIN ?? '/usr/bin/firefox-esr', args: ['-headless'], prefs: FIREFOX_PREFS } };
  const created = await wd(base, 'POST', '/session', { capabilities: { alwaysMatch: caps } });
  session = created.sessionId;
  const version = `${created.capabilities.browserName} ${created.capabilities.browserVersion}`;
  console.error(`[${browser}] ${version}: ${args.url}`);
  await wd(base, 'POST', `/session/${session}/timeouts`, { script: 60_000 });
  const started = Date.now();
  await wd(base, 'POST', `/session/${session}/url`, { url: args.url });
  let last = '';
  let st;
  for (;;) {
    st = JSON.parse(await wd(base, 'POST', `/session/${session}/execute/sync`, {
      script: 'const p = window.__peers; return JSON.stringify(p ? {state: p.state, progress: p.progress, error: p.error, log: document.getElementById("log")?.textContent ?? ""} : {state: null});',
      args: [],
    }));
    const line = st.progress ? `${st.progress.backend} ${st.progress.phase}${st.progress.case ? ` ${st.progress.case}` : ''}` : '';
    if (line && line !== last) { console.error(`[${browser}] ${((Date.now() - started) / 1000).toFixed(0)} s: ${line}`); last = line; }
    if (process.env.PEERS_DEBUG) console.error(JSON.stringify(st));
    if (st.state === 'done' || st.state === 'error') break;
    if (Date.now() - started > timeoutS * 1000) throw new Error(`page not done after ${timeoutS} s (last: ${line})`);
    await sleep(1000);
  }
  const page = JSON.parse(await wd(base, 'POST', `/session/${session}/execute/sync`, {
    script: 'return JSON.stringify(window.__peers);', args: [],
  }));
  const doc = { browser, browser_version: version, url: args.url, wall_s: (Date.now() - started) / 1000, ...page };
  writeFileSync(args.out, JSON.stringify(doc, null, 1));
  if (st.state === 'error') throw new Error(`page error: ${st.error}`);
  exitCode = summarize(doc);
} catch (e) {
  console.error(`[${browser}] FAILED: ${e.message}`);
} finally {
  if (session) await wd(base, 'DELETE', `/session/${session}`).catch(() => {});
  child.kill();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(exitCode);

/** Prints one line per backend and the closing count; 0 if nothing failed. */
function summarize(doc) {
  const r = doc.result;
  const fmt = (v) => (v == null ? '–' : v.toFixed(1));
  console.log(`\n${doc.browser_version}, isolated=${r.env.cross_origin_isolated}, fixture scale ÷${r.fixture.scale_divisor} (sha256 ${r.fixture.sha256.slice(0, 12)}…), batch ${r.fixture.batch_rows} rows`);
  let passed = 0;
  let failed = 0;
  for (const p of r.problems) { console.log(`  problem: ${p}`); failed++; }
  const total = (name) => r.runs.find((x) => x.name === name)?.suite?.total_ms;
  for (const run of r.runs) {
    if (!run.available) { console.log(`  ${run.name.padEnd(26)} skipped: ${run.skip_reason}`); continue; }
    const s = run.suite;
    const b = run.batch;
    const cases = s ? s.cases.map((c) => c.ms.toFixed(1)).join(' ') : '';
    const ref = r.backends.find((x) => x.name === run.name)?.engine_reference;
    const ratio = s && ref && total(ref) ? ` = ${(s.total_ms / total(ref)).toFixed(2)}× ${ref}` : '';
    console.log(`  ${run.name.padEnd(26)} suite ${fmt(s?.total_ms).padStart(9)} ms${ratio} (test1 ${fmt(s?.test1_ms)}; init ${fmt(s?.phases.init_ms)} sync ${fmt(s?.phases.sync_ms)} close ${fmt(s?.phases.close_ms)} reopen ${fmt(s?.phases.reopen_ms)} verify ${fmt(s?.phases.verify_ms)})  batch ${fmt(b?.ms)} ms`);
    if (cases) console.log(`  ${''.padEnd(26)} cases: ${cases}`);
    for (const [, ok] of run.checks) { if (ok) passed++; else failed++; }
    const runErrors = run.errors.filter((e) => !e.startsWith('check failed:'));
    for (const e of run.errors) console.log(`  ${''.padEnd(26)} ERROR ${e}`);
    failed += runErrors.length;
  }
  for (const [what, ok] of r.failure_checks ?? []) {
    console.log(`  ${ok ? 'ok' : 'FAILED'}: ${what}`);
    if (ok) passed++; else failed++;
  }
  console.log(`peers-harness ${doc.browser}: ${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}
