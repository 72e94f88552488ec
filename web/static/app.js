// The benchmark page's main thread: controls, the worker, progress, tables and SVG charts.
// No framework, no dependencies. The worker (worker.js) runs everything; this file only
// renders what the result document says: it computes no statistic (every median, ratio,
// interval, rank and goal verdict is computed once in Rust, bench-results). Result documents are
// described in web/README.md.
//
// Automation contract (the headless runner, bench-runner, relies on it):
//   URL: ?preset=quick|full|phone&autorun=1&suites=sql,batch,fs,raw,handoff,scale&backends=<list>|all
//        &runs=N&files=N&commit=<sha>   (extras: warmup=N, sql_scale=N, fs_runs=N, peer_runs=N,
//        scale_rows=N, scale_runs=N, target_pct=P: stop the SQL rounds at ±P % (0: exactly runs),
//        batch_repeats=N: runs of the batch per backend and round, the fastest kept;
//        fs_repeats=N: the same for the fs lifecycle; order_seed=N: seed of the SQL round orders;
//        call_timing=1: our backends time their OPFS calls in the SQL cases, a diagnostic)
//   window.__bench = {state: 'idle'|'running'|'done'|'error', progress, result, resultJson (the
//                     document's text as Rust wrote it: read this one), error,
//                     consoleErrors: [], calibrate()}, updated live. The results view is rendered
//   before state becomes 'done'. calibrate() resolves to the worker's CPU calibration loop times.

'use strict';

// ---------------------------------------------------------------------------------------
// Automation state and error capture (first, so nothing is missed)
// ---------------------------------------------------------------------------------------

const bench = {
  state: 'idle',
  progress: null,
  result: null,
  resultJson: null,
  error: null,
  consoleErrors: [],
};
window.__bench = bench;

const consoleError = console.error.bind(console);
console.error = (...args) => {
  bench.consoleErrors.push(args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : String(a))).join(' '));
  consoleError(...args);
};
window.addEventListener('error', (event) => {
  bench.consoleErrors.push(`error: ${event.message} (${event.filename}:${event.lineno})`);
});
window.addEventListener('unhandledrejection', (event) => {
  const r = event.reason;
  bench.consoleErrors.push(`unhandled rejection: ${r instanceof Error ? `${r.name}: ${r.message}` : String(r)}`);
});

// ---------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

/** Escaped, with a line-break opportunity after each hyphen (long backend names in headers). */
const escWrap = (v) => esc(v).replace(/-/g, '-<wbr>');

const esc = (v) => String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

const isNum = (v) => typeof v === 'number' && Number.isFinite(v);

const nf2 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const nf1 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const nf0 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const nfTick = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/** Milliseconds as in the seed tables: two decimals, thousands separators, "<0.01". */
function fmtMs(v) {
  if (!isNum(v)) return '–';
  if (v > 0 && v < 0.01) return '<0.01';
  return nf2.format(v);
}

/** Microseconds: one decimal below 100, none above. */
function fmtUs(v) {
  if (!isNum(v)) return '–';
  return v < 100 ? nf1.format(v) : nf0.format(v);
}

/** A duration with its unit, for chart labels (µs input). */
function fmtDurationUs(us) {
  if (!isNum(us)) return '–';
  if (us < 1000) return `${fmtUs(us)} µs`;
  if (us < 1e6) return `${nf2.format(us / 1000)} ms`;
  return `${nf2.format(us / 1e6)} s`;
}

/** Axis ticks in ms: no decimals from 1 up. */
function fmtTickMs(v) {
  if (!isNum(v)) return '';
  return v >= 1 || v === 0 ? nfTick.format(v) : String(+v.toPrecision(2));
}

/** Axis ticks of durations given in µs: 1 µs, 10 µs, 100 µs, 1 ms, 10 ms, 1 s. */
function fmtTickUs(us) {
  if (!isNum(us)) return '';
  if (us < 1000) return `${+us.toPrecision(3)} µs`;
  if (us < 1e6) return `${+(us / 1000).toPrecision(3)} ms`;
  return `${+(us / 1e6).toPrecision(3)} s`;
}

function fmtBytes(b) {
  if (!isNum(b)) return '–';
  if (b < 1024) return `${b} B`;
  if (b < 1024 * 1024) return `${nf1.format(b / 1024)} KiB`;
  if (b < 1024 ** 3) return `${nf1.format(b / 1024 ** 2)} MiB`;
  return `${nf1.format(b / 1024 ** 3)} GiB`;
}

function fmtElapsed(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, '0')}`;
}

const fmtRatio = (r) => (isNum(r) ? `×${r < 10 ? nf2.format(r) : nf1.format(r)}` : '–');

/**
 * A paired ratio from the document (`{median, lo?, hi?, min, max, n}`, computed in Rust) as
 * `×1.02 [0.99–1.05]`, or `×1.02 (n=2)` when there were too few rounds for an interval.
 */
function fmtRatioStat(r) {
  if (!r || !isNum(r.median)) return '';
  const m = fmtRatio(r.median);
  return isNum(r.lo) && isNum(r.hi) ? `${m} [${nf2.format(r.lo)}–${nf2.format(r.hi)}]` : `${m} (n=${r.n})`;
}

const VERDICTS = { met: ['met', 'pass'], not_met: ['not met', 'fail'], undecided: ['undecided', 'muted'] };
const verdictBadge = (v) => {
  const [text, cls] = VERDICTS[v] ?? [String(v), 'muted'];
  return `<span class="verdict ${cls}">${esc(text)}</span>`;
};

const ordinal = (n) => ['1st', '2nd', '3rd'][n - 1] ?? `${n}th`;

const rankBadge = (rank) => (rank && rank <= 3 ? `<span class="rank r${rank}" title="${ordinal(rank)} lowest median in this row">${ordinal(rank)}</span>` : '');

function debounce(fn, ms) {
  let t = 0;
  return (...a) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...a), ms);
  };
}

// ---------------------------------------------------------------------------------------
// Environment checks (main thread)
// ---------------------------------------------------------------------------------------

function supportsModuleWorker() {
  let supported = false;
  const options = {
    get type() {
      supported = true;
      return 'module';
    },
  };
  try {
    const url = URL.createObjectURL(new Blob([''], { type: 'text/javascript' }));
    new Worker(url, options).terminate();
    URL.revokeObjectURL(url);
  } catch {
    // Constructing failed: either no workers at all or no module workers.
  }
  return supported;
}

function isPhone() {
  if (navigator.userAgentData && typeof navigator.userAgentData.mobile === 'boolean') return navigator.userAgentData.mobile;
  if (/Android|iPhone|iPad|iPod|Mobile/i.test(navigator.userAgent)) return true;
  return matchMedia('(pointer: coarse)').matches && Math.min(screen.width, screen.height) < 820;
}

const warnings = new Map();

function setWarning(key, html) {
  if (html) warnings.set(key, html);
  else warnings.delete(key);
  const box = $('#warnings');
  box.hidden = warnings.size === 0;
  box.innerHTML = `<h2 class="visually-hidden">Warnings</h2><ul>${[...warnings.values()].map((w) => `<li>${w}</li>`).join('')}</ul>`;
  const persist = $('#persist-button');
  if (persist) persist.addEventListener('click', requestPersistence);
}

async function requestPersistence() {
  try {
    const granted = await navigator.storage.persist();
    if (granted) setWarning('persisted', null);
    else setWarning('persisted', 'The browser declined to persist this site\'s storage. Results are unaffected; OPFS data of this page may be evicted under storage pressure.');
  } catch (e) {
    setWarning('persisted', `Could not ask for persistent storage: ${esc(e)}`);
  }
}

async function checkEnvironment() {
  if (!window.isSecureContext) {
    setWarning('secure', '<strong>Not a secure context.</strong> OPFS needs <code>https:</code> or <code>http://localhost</code>; the benchmarks will fail here.');
  }
  if (!(navigator.storage && typeof navigator.storage.getDirectory === 'function')) {
    setWarning('opfs', '<strong>No OPFS</strong> (<code>navigator.storage.getDirectory</code> is missing): every storage benchmark will fail in this browser. Private browsing modes often disable it.');
  }
  if (!moduleWorkers) {
    setWarning('worker', '<strong>No module worker support:</strong> this browser cannot start the benchmark worker (dedicated workers with <code>type: "module"</code>). Update the browser.');
  }
  if (!window.crossOriginIsolated) {
    setWarning('coi', '<strong>Not cross-origin isolated:</strong> timers are coarse (Chromium 100 µs, Firefox up to 1 ms), so short timings are rounded. Serve the page with <code>Cross-Origin-Opener-Policy: same-origin</code> and <code>Cross-Origin-Embedder-Policy: require-corp</code> (the repository\'s <code>serve</code> command does).');
  }
  try {
    if (navigator.storage && navigator.storage.persisted && !(await navigator.storage.persisted())) {
      setWarning('persisted', '<strong>Storage not persisted:</strong> the browser may evict this site\'s OPFS data under storage pressure. The measurements are unaffected. <button type="button" id="persist-button">Ask to persist</button>');
    }
  } catch {
    // persisted() missing or refused: nothing to report.
  }
}

// ---------------------------------------------------------------------------------------
// Views: what the renderers show, from a result document or from live progress
// ---------------------------------------------------------------------------------------

const SQL_PHASES = [
  ['prepare_ms', 'Preparation'],
  ['init_ms', 'Initialization'],
  ['sync_ms', 'Later explicit sync'],
  ['close_ms', 'Close'],
  ['reopen_ms', 'Reopen'],
  ['verify_ms', 'Verification'],
];

const SUITE_LABELS = { sql: '16-case SQL suite', batch: '10,000-row transaction', fs: 'Filesystem lifecycle', raw: 'Raw OPFS per-call floor', handoff: 'Multi-tab hand-off', scale: 'Scale and space' };

function browserLabel(env, doc = null) {
  if (!env) return 'unknown browser';
  const version = env.browser_version ? ` ${String(env.browser_version).split('.')[0]}` : '';
  const emulated = doc?.runner?.emulation ? ' (phone emulation, not a phone)' : '';
  if (env.browser) return `${env.browser}${version}${emulated}`;
  return env.runtime === 'native' ? `native (${env.os ?? '?'})` : 'unknown browser';
}

// Every view below reads the summaries the document carries (computed once, in Rust, by the
// worker or, for a loaded file, by its `load_document`): medians, min–max, paired ratios with
// their intervals, ranks, counters, floors, goals. Nothing here computes a statistic.

function sqlViewOf(sql) {
  if (!sql || !Array.isArray(sql.backends)) return null;
  const list = sql.backends;
  const backends = list.map((b) => ({
    name: b.name,
    durability: b.durability,
    persistent: b.persistent !== false,
    engine: b.engine ?? 'sqlite',
    reference: b.reference ?? null,
    pkg: [b.package, b.version].filter(Boolean).join(' '),
    settings: b.durability_settings ?? '',
    skipped: b.skipped ?? null,
    error: b.error ?? null,
    isReference: b.reference ? b.reference === b.name : b.persistent === false,
    isOurs: b.name.startsWith('ours-'),
  }));
  const by = (f) => Object.fromEntries(list.map((b) => [b.name, f(b) ?? null]));
  const sm = (b) => b.summary ?? {};
  const caseOf = (arr, n) => (arr ?? []).find((c) => c.number === n);
  return {
    backends,
    scale: sql.suite?.scale_divisor ?? 1,
    seed: sql.suite?.seed,
    sha256: sql.suite?.sha256,
    batchRows: sql.suite?.batch_rows,
    runs: sql.config?.runs,
    warmup: sql.config?.warmup,
    orderSeed: sql.config?.order_seed,
    rounds: sql.rounds ?? [],
    bootstrap: sql.bootstrap ?? null,
    goals: sql.goals ?? [],
    metrics: {
      total: by((b) => sm(b).total_ms),
      test1: by((b) => sm(b).test1_ms),
      rest: by((b) => sm(b).tests_2_to_16_ms),
      batch: by((b) => sm(b).batch_ms),
    },
    ratios: {
      total: by((b) => b.ratios?.total),
      test1: by((b) => b.ratios?.test1),
      rest: by((b) => b.ratios?.tests_2_to_16),
      batch: by((b) => b.ratios?.batch),
    },
    ranks: {
      total: by((b) => sm(b).ranks?.total),
      test1: by((b) => sm(b).ranks?.test1),
      rest: by((b) => sm(b).ranks?.tests_2_to_16),
      batch: by((b) => sm(b).ranks?.batch),
    },
    references: by((b) => b.ratios?.reference),
    cases: (sql.suite?.cases ?? []).map((c) => ({
      number: c.number,
      title: c.title,
      stats: by((b) => caseOf(sm(b).cases_ms, c.number)?.ms),
      counters: by((b) => caseOf(sm(b).cases_ms, c.number)?.counters),
      ratios: by((b) => caseOf(b.ratios?.cases, c.number)?.ratio),
    })),
    batchCounters: by((b) => sm(b).batch_counters),
    phases: {
      suite: SQL_PHASES.map(([k, label]) => ({ label, stats: by((b) => sm(b).suite_phases?.[k]) })),
      batch: SQL_PHASES.map(([k, label]) => ({ label, stats: by((b) => sm(b).batch_phases?.[k]) })),
    },
  };
}

function fsViewOf(fs) {
  if (!fs || !Array.isArray(fs.backends)) return null;
  const by = (f) => Object.fromEntries(fs.backends.map((b) => [b.name, f(b) ?? null]));
  const phaseOf = (b, phase) => (b.summary?.phases ?? []).find((p) => p.phase === phase);
  const ratioOf = (b, phase) => (b.ratios?.phases ?? []).find((p) => p.phase === phase)?.ratio;
  const names = (fs.backends.find((b) => b.summary)?.summary?.phases ?? []).map((p) => p.phase);
  return {
    files: fs.files,
    fileSize: fs.file_size_bytes,
    backends: fs.backends.map((b) => ({ name: b.name, durability: b.durability, storage: b.storage, rename: b.rename_method, error: b.error ?? null, baseline: String(b.storage ?? '').endsWith('file-per-file') })),
    versus: fs.backends.find((b) => b.ratios)?.ratios?.versus ?? null,
    floors: fs.floors ?? [],
    phases: names.map((phase) => ({
      phase,
      stats: by((b) => phaseOf(b, phase)?.ms),
      counters: by((b) => phaseOf(b, phase)?.counters),
      ratios: by((b) => ratioOf(b, phase)),
      floorRatio: by((b) => phaseOf(b, phase)?.floor_ratio),
    })),
    total: by((b) => b.summary?.total_ms),
    totalRatio: by((b) => b.ratios?.total),
    ranks: by((b) => b.summary?.rank),
  };
}

function rawViewOf(raw) {
  if (!raw || !Array.isArray(raw.summary)) return null;
  return {
    runs: (raw.runs ?? []).length,
    derived: raw.derived ?? null,
    series: raw.summary.map((s) => ({
      name: s.name,
      calls: s.calls,
      bytesPerCall: s.bytes_per_call,
      totalBytes: s.total_bytes,
      mean: s.mean_us,
      p50: s.p50_us,
      p90: s.p90_us,
      p99: s.p99_us,
      max: s.max_us,
      first: s.first_us,
      totalUs: s.total_us,
    })),
  };
}

/** The hand-off section's summary and goals, as the document has them (computed in Rust). */
function handoffViewOf(h) {
  if (!h || !h.summary) return null;
  return {
    config: h.config ?? {},
    runs: (h.rounds ?? []).filter((r) => !r.warmup).length,
    // How our installs' access handles were opened (absent in older documents: exclusive).
    handles: (h.rounds ?? []).map((r) => r.handles).find(Boolean) ?? null,
    floor: h.summary.floor_ms ?? null,
    workloads: h.summary.workloads ?? [],
    // JavaScript peers (absent in older documents): their summaries, and what each is.
    peers: h.summary.peers ?? [],
    peerInfo: h.peers ?? [],
    goals: h.goals ?? [],
    error: h.error ?? null,
  };
}

/** The scale section's summaries, paired ratios and goals, as the document has them (computed in Rust). */
function scaleViewOf(s) {
  if (!s || !Array.isArray(s.backends) || !s.summarized) return null;
  return {
    config: s.config ?? {},
    runs: (s.rounds ?? []).filter((r) => !r.warmup).length,
    backends: s.backends.map((b) => ({
      name: b.name,
      durability: b.durability,
      settings: b.durability_settings ?? '',
      pkg: [b.package, b.version].filter(Boolean).join(' '),
      error: b.error ?? null,
      summary: b.summary ?? {},
      isBaseline: b.name === s.config?.baseline,
    })),
    ratios: s.ratios ?? [],
    goals: s.goals ?? [],
  };
}

function viewOfDocument(doc, label, origin) {
  const suites = new Set(doc.config?.suites ?? ['sql', 'batch', 'fs', 'raw']);
  return {
    label,
    origin,
    doc,
    env: doc.environment ?? null,
    suites,
    sql: sqlViewOf(doc.sql),
    fs: fsViewOf(doc.fs),
    raw: rawViewOf(doc.raw),
    handoff: handoffViewOf(doc.handoff),
    scale: scaleViewOf(doc.scale),
    live: false,
  };
}

// Live samples from progress events, until the result document arrives.
let live = null;

function newLive(environment, config) {
  return { environment, config, sql: new Map(), batch: new Map(), fs: new Map(), raw: new Map(), scale: new Map() };
}

function recordLive(p) {
  // `so_far`: the median and range of this backend's measured units so far, computed in Rust.
  if (!live || p.status !== 'end' || p.warmup || !p.so_far) return;
  const key = p.suite === 'raw' ? p.case : p.backend;
  const map = live[p.suite];
  if (map) map.set(key, p.so_far);
}

function liveView() {
  const per = (map) => Object.fromEntries(map);
  // The worker says which backends this run runs ('selection', before its first progress event).
  const chosen = (list) => (list ?? []).filter((b) => live.selected?.has(b.name));
  const suites = new Set(live.config.suites);
  const sql = suites.has('sql') || suites.has('batch')
    ? {
        backends: chosen(backendInfo?.sql).map((b) => ({ ...b, isReference: b.reference ? b.reference === b.name : b.persistent === false })),
        metrics: { total: per(live.sql), batch: per(live.batch) },
        ratios: {},
        ranks: {},
        cases: [],
        goals: [],
        phases: null,
      }
    : null;
  const fs = suites.has('fs') ? { backends: chosen(backendInfo?.fs), phases: [], total: per(live.fs), totalRatio: {}, ranks: {}, floors: [] } : null;
  const raw = live.raw.size
    ? { live: true, series: [...live.raw].map(([name, stat]) => ({ name, totalUs: stat && { median: stat.median * 1000, min: stat.min * 1000, max: stat.max * 1000, n: stat.n } })) }
    : null;
  // The scale suite while it runs: each backend's build times so far (the rest comes with the document).
  const scale = live.scale.size ? { live: true, build: [...live.scale] } : null;
  return {
    label: `${browserLabel(live.environment)} · this run (in progress)`,
    origin: 'live',
    doc: null,
    env: live.environment,
    suites: new Set(live.config.suites),
    sql,
    fs,
    raw,
    scale,
    live: true,
  };
}

// ---------------------------------------------------------------------------------------
// SVG charts
// ---------------------------------------------------------------------------------------

const COLORS = ['#2563eb', '#d97706', '#059669', '#9333ea', '#db2777', '#0891b2'];

function niceStep(span, count) {
  const raw = span / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * mag;
}

/**
 * Horizontal chart: one group per row label (a backend or a workload), one mark per view
 * (colour), all on one shared axis. `scale` 'linear' draws bars from zero; 'log' draws a dot at
 * the median. Both draw the min–max range as a whisker.
 * groups: [{label, items: [{view: index, stat: {median, min, max, n}}]}]
 */
function chartSvg({ groups, viewLabels, unitLabel, format, tickFormat = format, scale, width, ratioNote }) {
  const values = groups.flatMap((g) => g.items.flatMap((i) => (i.stat ? [i.stat.min, i.stat.max, i.stat.median] : []))).filter((v) => isNum(v));
  if (!values.length) return '';
  const positive = values.filter((v) => v > 0);
  const W = Math.max(280, Math.floor(width));
  const labelH = 16;
  const barH = 12;
  const gap = 3;
  const groupGap = 10;
  const padL = 2;
  const padR = Math.min(130, Math.max(88, W * 0.22));
  const plotW = W - padL - padR;
  let x;
  let ticks;
  if (scale === 'log' && positive.length) {
    const lo = 10 ** Math.floor(Math.log10(Math.min(...positive)));
    const hi = 10 ** Math.ceil(Math.log10(Math.max(...positive) * 1.0001));
    const span = Math.log10(hi) - Math.log10(lo) || 1;
    x = (v) => padL + ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / span) * plotW;
    ticks = [];
    for (let t = lo; t <= hi * 1.0001; t *= 10) ticks.push(t);
  } else {
    const max = Math.max(...values) || 1;
    const step = niceStep(max, W < 500 ? 3 : 5);
    const top = Math.ceil(max / step) * step;
    x = (v) => padL + (Math.max(0, v) / top) * plotW;
    ticks = [];
    for (let t = 0; t <= top + step / 2; t += step) ticks.push(t);
  }
  let y = 4;
  const parts = [];
  for (const g of groups) {
    parts.push(`<text class="g-label" x="${padL}" y="${y + 12}">${esc(g.label)}</text>`);
    y += labelH;
    for (const item of g.items) {
      const color = COLORS[item.view % COLORS.length];
      const tip = `${g.label} — ${viewLabels[item.view] ?? ''}: ` + (item.stat ? `median ${format(item.stat.median)}, min–max ${format(item.stat.min)} – ${format(item.stat.max)} (n=${item.stat.n})` : (item.missing ?? 'no result'));
      const cy = y + barH / 2;
      if (!item.stat) {
        parts.push(`<text class="missing" x="${padL}" y="${cy + 4}">${esc(item.missing ?? 'no result')}<title>${esc(tip)}</title></text>`);
      } else {
        const xm = x(item.stat.median);
        const x0 = x(item.stat.min);
        const x1 = x(item.stat.max);
        if (scale === 'log') {
          parts.push(`<line class="stem" x1="${padL}" x2="${xm}" y1="${cy}" y2="${cy}" stroke="${color}" />`);
        } else {
          parts.push(`<rect x="${padL}" y="${y}" width="${Math.max(1, xm - padL)}" height="${barH}" rx="2" fill="${color}" opacity="0.85"><title>${esc(tip)}</title></rect>`);
        }
        if (item.stat.n > 1 && x1 - x0 >= 1) {
          parts.push(`<line class="whisker" x1="${x0}" x2="${x1}" y1="${cy}" y2="${cy}" />`);
          parts.push(`<line class="whisker" x1="${x0}" x2="${x0}" y1="${cy - 4}" y2="${cy + 4}" />`);
          parts.push(`<line class="whisker" x1="${x1}" x2="${x1}" y1="${cy - 4}" y2="${cy + 4}" />`);
        }
        if (scale === 'log') parts.push(`<circle cx="${xm}" cy="${cy}" r="5" fill="${color}"><title>${esc(tip)}</title></circle>`);
        parts.push(`<text class="value" x="${Math.max(xm, x1) + 6}" y="${cy + 4}">${esc(format(item.stat.median))}</text>`);
      }
      y += barH + gap;
    }
    if (g.note) {
      parts.push(`<text class="ratio" x="${W - 2}" y="${y - gap - 1}" text-anchor="end">${esc(g.note)}</text>`);
    }
    y += groupGap;
  }
  const axisY = y;
  const grid = ticks
    .map((t, i) => {
      const anchor = i === 0 ? 'start' : i === ticks.length - 1 && x(t) > W - 30 ? 'end' : 'middle';
      return `<line class="grid" x1="${x(t)}" x2="${x(t)}" y1="0" y2="${axisY}" /><text class="tick" x="${x(t)}" y="${axisY + 14}" text-anchor="${anchor}">${esc(tickFormat(t))}</text>`;
    })
    .join('');
  const H = axisY + 20;
  const caption = `${unitLabel}${scale === 'log' ? ' · log scale' : ''}${ratioNote ? ` · ${ratioNote}` : ''}`;
  return `<svg class="chart" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(caption)}">${grid}<line class="axis" x1="${padL}" x2="${padL + plotW}" y1="${axisY}" y2="${axisY}" />${parts.join('')}</svg><div class="chart-caption">${esc(caption)}</div>`;
}

function legendHtml(views) {
  if (views.length < 2) return '';
  return `<div class="legend">${views.map((v, i) => `<span><i style="background:${COLORS[i % COLORS.length]}"></i>${esc(v.label)}</span>`).join('')}</div>`;
}

// ---------------------------------------------------------------------------------------
// Tables
// ---------------------------------------------------------------------------------------

function statCell(stat, { rank, ratio, ratioTitle, format = fmtMs, extra = '' } = {}) {
  if (!stat) return `<td class="cell missing">${extra || '–'}</td>`;
  const range = stat.n > 1 ? `<div class="range">${format(stat.min)} – ${format(stat.max)}</div>` : '';
  const ratioHtml = ratio ? `<div class="ratio" title="${esc(ratioTitle ?? '')}">${esc(ratio)}</div>` : '';
  return `<td class="cell"><div class="med">${format(stat.median)}${rankBadge(rank)}</div>${range}${ratioHtml}${extra}</td>`;
}

function tableWrap(caption, head, rows, note = '', cls = '') {
  // The visible title sits outside the scrolling box so that it wraps on narrow screens.
  return `<div class="table-title" aria-hidden="true">${caption}</div><div class="table-wrap"><table${cls ? ` class="${cls}"` : ''}><caption class="visually-hidden">${caption}</caption><thead>${head}</thead><tbody>${rows.join('')}</tbody></table></div>${note ? `<p class="table-note">${note}</p>` : ''}`;
}

/** Union of backend names over views, in first-seen order, with their info. */
function unionBackends(views, pick) {
  const out = new Map();
  for (const v of views) for (const b of pick(v)?.backends ?? []) if (!out.has(b.name)) out.set(b.name, b);
  return [...out.values()];
}

const backendHead = (b) => {
  const sub = b.isReference ? 'memory reference' : b.isOurs === false && b.engine === 'pglite' ? 'PGlite' : '';
  const title = [b.durability, b.settings, b.pkg].filter(Boolean).join(' · ');
  return `<th scope="col" title="${esc(title)}">${escWrap(b.name)}${sub ? `<div class="sub">${esc(sub)}</div>` : ''}${b.skipped ? '<div class="sub">skipped</div>' : ''}${b.error ? '<div class="sub fail">failed</div>' : ''}</th>`;
};

/** SQL metric table: one row per view, one column per backend; ratios are the document's paired ones. */
function sqlMetricTable(views, metric, caption) {
  const backends = unionBackends(views, (v) => v.sql);
  const head = `<tr><th scope="col">Browser / run</th>${backends.map(backendHead).join('')}</tr>`;
  const rows = views
    .filter((v) => v.sql)
    .map((v) => {
      const stats = v.sql.metrics[metric] ?? {};
      const ratios = v.sql.ratios?.[metric] ?? {};
      const ranks = v.sql.ranks?.[metric] ?? {};
      const rounds = v.live ? live?.config?.runs : v.sql.runs;
      const mine = new Map(v.sql.backends.map((b) => [b.name, b]));
      return `<tr><th scope="row"><i class="swatch" style="background:${COLORS[views.indexOf(v) % COLORS.length]}"></i>${esc(v.label)}<div class="sub">${isNum(rounds) ? `${rounds} round${rounds === 1 ? '' : 's'}` : ''}${v.sql.scale && v.sql.scale !== 1 ? ` · counts ÷${v.sql.scale}` : ''}</div></th>${backends
        .map((b) => {
          const s = stats[b.name];
          const info = mine.get(b.name);
          const isRef = info?.isReference;
          const r = ratios[b.name];
          const ratio = isRef && s ? 'reference' : fmtRatioStat(r);
          const title = r ? `paired per round: median of (this ÷ ${v.sql.references?.[b.name] ?? 'its memory reference'}), 95 % bootstrap interval in brackets` : '';
          const missing = info?.skipped ? `skipped: ${info.skipped}` : info?.error ? `failed: ${info.error}` : v.live ? 'pending' : 'not run';
          return statCell(s, { rank: ranks[b.name], ratio, ratioTitle: title, extra: s ? '' : `<span class="muted" title="${esc(missing)}">${esc(missing.length > 40 ? `${missing.slice(0, 40)}…` : missing)}</span>` });
        })
        .join('')}</tr>`;
    });
  return tableWrap(caption, head, rows);
}

/** A per-view table: rows (cases or phases), one column per backend; `row.ratios` (paired, from the document) under each value. */
function rowsByBackendTable(caption, backends, rows, { ratioLabel = '', missing = 'n/a' } = {}) {
  const head = `<tr><th scope="col"></th>${backends.map(backendHead).join('')}</tr>`;
  const body = rows.map((row) => `<tr><th scope="row">${row.label}</th>${backends
    .map((b) => {
      const s = row.stats[b.name];
      const ratio = fmtRatioStat(row.ratios?.[b.name]) || (isNum(row.plain?.[b.name]) ? fmtRatio(row.plain[b.name]) : '');
      return statCell(s, { rank: row.ranks?.[b.name], ratio, ratioTitle: ratioLabel, extra: s ? '' : `<span class="muted">${missing}</span>` });
    })
    .join('')}</tr>`);
  return tableWrap(caption, head, body);
}

/** The goal checks of a SQL view (decided in Rust from the intervals). */
function goalsTable(v) {
  const goals = v.sql.goals ?? [];
  if (!goals.length) return '';
  const overall = goals.filter((g) => g.case == null);
  const perCase = goals.filter((g) => g.case != null);
  const head = '<tr><th scope="col">Goal</th><th scope="col">Paired ratio [95 %]</th><th scope="col">Floor</th><th scope="col">Verdict</th></tr>';
  // The physical floor (computed in Rust): the backend's flushes in the goal's span × this
  // run's cheaper raw write+flush pair, plus its bytes written × the raw 1 MiB write and flush
  // prices (documents since 2026-12-05), on the reference's time for the same span.
  const floorBytes = (f) => (isNum(f.bytes) && isNum(f.flushed_bytes) && isNum(f.write_us_per_mib) && isNum(f.flush_us_per_mib)
    ? ` + ${(f.bytes / 1e6).toFixed(1)} MB written × ${f.write_us_per_mib.toFixed(0)} µs/MiB + ${(f.flushed_bytes / 1e6).toFixed(1)} MB flushed × ${f.flush_us_per_mib.toFixed(0)} µs/MiB`
    : '');
  const floorCell = (g) => (g.floor ? `<td class="cell" title="${esc(`${g.floor.flushes} flushes × ${g.floor.call_us.toFixed(0)} µs (${g.floor.series})${floorBytes(g.floor)} = ${g.floor.floor_ms.toFixed(1)} ms on a ${g.floor.reference_ms.toFixed(0)} ms reference`)}">${esc(`${g.floor.ratio.toFixed(2)}×`)}</td>` : '<td>–</td>');
  const rows = overall.map((g) => `<tr><th scope="row">${esc(g.statement)}</th><td class="cell">${esc(fmtRatioStat(g.ratio) || '–')}</td>${floorCell(g)}<td>${verdictBadge(g.verdict)}</td></tr>`);
  let html = tableWrap(`Goals · ${esc(v.label)}`, head, rows, 'A goal is met only if its whole 95 % interval is on the right side of the bound, not met if the whole interval is on the wrong side; otherwise it is undecided (more rounds narrow the interval). Floor: the least this run\'s OPFS charges the backend over the goal\'s span (its flushes × the raw write+flush cost, plus its bytes written and flushed × the raw costs of writing and of flushing 1 MiB, on the reference\'s time); a floor above the bound puts the goal out of reach at those prices.');
  if (perCase.length) {
    const pairs = [...new Set(perCase.map((g) => `${g.backend} ÷ ${g.versus}`))];
    const cases = [...new Set(perCase.map((g) => g.case))];
    const phead = `<tr><th scope="col">Case</th>${pairs.map((p) => `<th scope="col">${escWrap(p)} &gt; 1</th>`).join('')}</tr>`;
    const prow = cases.map((c) => `<tr><th scope="row">${c}</th>${pairs
      .map((p) => {
        const g = perCase.find((x) => x.case === c && `${x.backend} ÷ ${x.versus}` === p);
        return g ? `<td class="cell">${verdictBadge(g.verdict)}<div class="ratio">${esc(fmtRatioStat(g.ratio))}</div></td>` : '<td>–</td>';
      })
      .join('')}</tr>`);
    html += `<details class="per-view"><summary>Every peer slower than ours in every case? · ${esc(v.label)}</summary>${tableWrap(`Peer ÷ ours (strict), per case · ${esc(v.label)}`, phead, prow)}</details>`;
  }
  return html;
}

function countersText(c) {
  if (!c) return '–';
  return `${c.flushes} fl · ${c.writes} wr · ${fmtBytes(c.bytes_written)} · ${c.reads} rd`;
}

// ---------------------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------------------

function chartBlock(id, html) {
  return `<div class="chart-box" data-chart="${id}">${html}</div>`;
}

function sqlChart(views, metric, width) {
  const backends = unionBackends(views, (v) => v.sql).filter((b) => !b.skipped);
  const groups = backends.map((b) => ({
    label: b.isReference ? `${b.name} (memory reference)` : b.name,
    items: views.map((v, i) => ({ view: i, stat: v.sql?.metrics?.[metric]?.[b.name] ?? null, missing: v.live ? 'pending' : 'not run' })).filter((it) => views[it.view].sql),
  }));
  return chartSvg({ groups, viewLabels: views.map((v) => v.label), unitLabel: 'Median · milliseconds · shared scale · whiskers: min–max', format: fmtMs, tickFormat: fmtTickMs, scale: 'linear', width });
}

const RATIO_NOTE = 'Ratios are paired: in every round, this backend\'s time ÷ its memory reference\'s time in the same round; shown as the median of those per-round ratios with its 95 % percentile-bootstrap interval in brackets (no interval below six rounds: too few for a 95 % interval of a median).';

function protocolLine(v) {
  const s = v.sql;
  if (!s || v.live) return '';
  const parts = [];
  if (isNum(s.runs)) parts.push(`${s.runs} measured round${s.runs === 1 ? '' : 's'} after ${s.warmup ?? 0} warm-up`);
  if (s.orderSeed !== undefined && s.orderSeed !== null) parts.push(`order shuffled per round (seed ${esc(s.orderSeed)}; every order is in the JSON)`);
  if (s.bootstrap) parts.push(`intervals: ${nf0.format(s.bootstrap.resamples)} bootstrap resamples, seed ${esc(s.bootstrap.seed)}`);
  return parts.length ? `<p class="muted small">${esc(v.label)}: ${parts.join(' · ')}.</p>` : '';
}

function renderSql(views, width) {
  const vs = views.filter((v) => v.sql && v.suites.has('sql'));
  if (!vs.length) return '';
  const any = vs[0].sql;
  const scaled = vs.some((v) => v.sql.scale && v.sql.scale !== 1);
  let html = `<section class="suite" id="suite-sql"><h3>${SUITE_LABELS.sql}</h3>
    <p class="suite-desc">SQLite's 16 speed-comparison cases as pinned by wa-sqlite and PGlite, generated from a fixed seed${any.seed !== undefined ? ` (${esc(any.seed)}` : ''}${any.sha256 ? `, SQL SHA-256 <code title="${esc(any.sha256)}">${esc(String(any.sha256).slice(0, 12))}…</code>` : ''}${any.seed !== undefined ? ')' : ''}; the time is the sum of the 16 cases. Every round runs every backend once, in a shuffled order. ${RATIO_NOTE} Ranks compare the persistent backends' medians.${scaled ? ' <strong>Scaled down: not comparable with full-size runs.</strong>' : ''}</p>
    ${vs.map(protocolLine).join('')}
    ${legendHtml(vs)}${chartBlock('sql-total', sqlChart(vs, 'total', width))}
    ${sqlMetricTable(vs, 'total', '16-case total (ms): median, min–max, rank; ×paired ratio to the memory reference [95 % interval]')}`;
  for (const v of vs.filter((x) => !x.live)) html += goalsTable(v);
  if (vs.some((v) => Object.values(v.sql.metrics.test1 ?? {}).some(Boolean))) {
    html += sqlMetricTable(vs, 'test1', 'Test 1 alone: autocommit INSERTs, the commit cost (ms; ×paired ratio [95 %])');
    html += sqlMetricTable(vs, 'rest', 'Tests 2–16: mostly CPU (ms; ×paired ratio [95 %])');
  }
  for (const v of vs.filter((x) => !x.live && x.sql.cases.length)) {
    const shown = v.sql.backends.filter((b) => !b.skipped);
    const rows = v.sql.cases.map((c) => ({ label: `${c.number}. ${esc(c.title)}`, stats: c.stats, ratios: c.ratios }));
    html += `<details class="per-view"><summary>Individual SQL cases · ${esc(v.label)}</summary>${rowsByBackendTable(`Individual cases (ms; ×paired ratio to the memory reference [95 %]) · ${esc(v.label)}`, shown, rows, { ratioLabel: 'paired per round, 95 % bootstrap interval' })}</details>`;
    const counted = shown.filter((b) => v.sql.cases.some((c) => c.counters[b.name]));
    if (counted.length) {
      const head = `<tr><th scope="col"></th>${counted.map((b) => `<th scope="col">${escWrap(b.name)}</th>`).join('')}</tr>`;
      const body = v.sql.cases.map((c) => `<tr><th scope="row">${c.number}. ${esc(c.title)}</th>${counted.map((b) => `<td class="counters">${countersText(c.counters[b.name])}</td>`).join('')}</tr>`);
      body.push(`<tr><th scope="row">10k batch transaction</th>${counted.map((b) => `<td class="counters">${countersText(v.sql.batchCounters[b.name])}</td>`).join('')}</tr>`);
      html += `<details class="per-view"><summary>Physical calls per case (our VFS) · ${esc(v.label)}</summary>${tableWrap(`Median physical calls per case: flushes · writes · bytes written · reads · ${esc(v.label)}`, head, body)}</details>`;
    }
    if (v.sql.phases) {
      const rows2 = v.sql.phases.suite.map((p) => ({ label: p.label, stats: p.stats }));
      html += `<details class="per-view"><summary>Lifecycle phases of the suite · ${esc(v.label)}</summary>${rowsByBackendTable(`16-case suite · lifecycle (ms) · ${esc(v.label)}`, shown, rows2)}<p class="table-note">Preparation, close and cleanup are outside the workload timings. After reopen the suite checks that its dropped tables are gone and runs <code>PRAGMA integrity_check</code>. "n/a": not applicable (the reference does not persist).</p></details>`;
    }
    html += backendsDetails(v);
  }
  return `${html}</section>`;
}

/** What each backend is: engine, package, durability and its settings, reference, skip/failure. */
function backendsDetails(v) {
  const head = '<tr><th scope="col">Backend</th><th scope="col">Engine</th><th scope="col">Package</th><th scope="col">Durability</th><th scope="col">Settings</th><th scope="col">Reference</th><th scope="col">Status</th></tr>';
  const rows = v.sql.backends.map((b) => `<tr><th scope="row">${esc(b.name)}</th><td>${esc(b.engine)}</td><td>${esc(b.pkg || '–')}</td><td>${esc(b.durability)}</td><td>${esc(b.settings || '–')}</td><td>${esc(b.reference ?? '–')}</td><td>${b.skipped ? `<span class="muted">skipped: ${esc(b.skipped)}</span>` : b.error ? `<span class="fail">failed: ${esc(b.error)}</span>` : 'ran'}</td></tr>`);
  return `<details class="per-view"><summary>Backends · ${esc(v.label)}</summary>${tableWrap(`SQL backends · ${esc(v.label)}`, head, rows)}</details>`;
}

function renderBatch(views, width) {
  const vs = views.filter((v) => v.sql && v.suites.has('batch') && (v.live || Object.values(v.sql.metrics.batch ?? {}).some(Boolean)));
  if (!vs.length) return '';
  let html = `<section class="suite" id="suite-batch"><h3>${SUITE_LABELS.batch}</h3>
    <p class="suite-desc">One transaction inserting ${isNum(vs[0].sql.batchRows) ? nf0.format(vs[0].sql.batchRows) : '10,000'} rows through one prepared statement; after reopen every row is verified. ${RATIO_NOTE}</p>
    ${legendHtml(vs)}${chartBlock('batch', sqlChart(vs, 'batch', width))}
    ${sqlMetricTable(vs, 'batch', 'Batch transaction (ms): median, min–max, rank; ×paired ratio to the memory reference [95 % interval]')}`;
  for (const v of vs.filter((x) => !x.live && x.sql.phases)) {
    html += `<details class="per-view"><summary>Lifecycle phases of the batch · ${esc(v.label)}</summary>${rowsByBackendTable(`10k batch · lifecycle (ms) · ${esc(v.label)}`, v.sql.backends.filter((b) => !b.skipped), v.sql.phases.batch.map((p) => ({ label: p.label, stats: p.stats })))}</details>`;
  }
  return `${html}</section>`;
}

const FS_BASELINE = 'files-opfs';

function renderFs(views, width) {
  const vs = views.filter((v) => v.fs);
  if (!vs.length) return '';
  const backends = unionBackends(vs, (v) => v.fs);
  const groups = backends.map((b) => ({
    label: b.name === FS_BASELINE ? `${b.name} (one OPFS file per file)` : b.name,
    items: vs.map((v, i) => ({ view: i, stat: v.fs.total[b.name] ?? null, missing: v.live ? 'pending' : 'not run' })),
  }));
  const f = vs.find((v) => v.fs.files)?.fs;
  let html = `<section class="suite" id="suite-fs"><h3>${SUITE_LABELS.fs}</h3>
    <p class="suite-desc">${f ? `${nf0.format(f.files)} files × ${fmtBytes(f.fileSize)}: ` : ''}mount, create, write, read (every byte verified), rename, delete half, flush, reopen, verify the survivors. Our volume in both buffer modes at each durability level, against the hand-made baseline of one OPFS file per file (<code>${FS_BASELINE}</code>); ratios to that baseline are paired per round, with 95 % intervals.</p>
    ${legendHtml(vs)}${chartBlock('fs', chartSvg({ groups, viewLabels: vs.map((v) => v.label), unitLabel: 'Sum of the phases · median · milliseconds · shared scale', format: fmtMs, tickFormat: fmtTickMs, scale: 'log', width }))}`;
  for (const v of vs) {
    const rows = v.fs.phases.map((p) => ({ label: esc(p.phase), stats: p.stats, ratios: p.ratios }));
    rows.push({ label: '<strong>Total</strong>', stats: v.fs.total, ratios: v.fs.totalRatio, ranks: v.fs.ranks });
    for (const fl of v.fs.floors ?? []) {
      const phase = v.fs.phases.find((p) => p.phase === fl.phase);
      if (phase) rows.push({ label: `${esc(fl.phase)} ÷ raw floor <span class="sub">(${fmtMs(fl.ms)} ms: ${esc(fl.what)})</span>`, stats: phase.stats, plain: phase.floorRatio });
    }
    html += `<div class="per-view-block"><h4><i class="swatch" style="background:${COLORS[vs.indexOf(v) % COLORS.length]}"></i>${esc(v.label)}</h4>${rowsByBackendTable(`Filesystem lifecycle (ms): median, min–max; ×paired ratio to ${esc(v.fs.versus ?? FS_BASELINE)} [95 %] · ${esc(v.label)}`, v.fs.backends, rows, { ratioLabel: `paired per round ÷ ${v.fs.versus ?? FS_BASELINE}, 95 % bootstrap interval`, missing: v.live ? 'pending' : 'n/a' })}</div>`;
    const counted = v.fs.backends.filter((b) => v.fs.phases.some((p) => p.counters?.[b.name]));
    if (counted.length && !v.live) {
      const head = `<tr><th scope="col"></th>${counted.map((b) => `<th scope="col">${escWrap(b.name)}</th>`).join('')}</tr>`;
      const body = v.fs.phases.map((p) => `<tr><th scope="row">${esc(p.phase)}</th>${counted.map((b) => `<td class="counters">${countersText(p.counters[b.name])}</td>`).join('')}</tr>`);
      html += `<details class="per-view"><summary>Physical calls per phase (our volume) · ${esc(v.label)}</summary>${tableWrap(`Median physical calls per phase · ${esc(v.label)}`, head, body)}</details>`;
    }
    const failed = v.fs.backends.filter((b) => b.error);
    if (failed.length) html += `<ul class="failures">${failed.map((b) => `<li class="fail-item"><strong>${esc(b.name)}:</strong> ${esc(b.error)}</li>`).join('')}</ul>`;
  }
  html += '<p class="table-note">Read includes byte verification. Delete removes every other file; reopen unmounts and mounts again from what is stored, and verify lists and reads back the survivors. A clean reopen is not crash durability. The raw floor rows divide a phase\'s median by what the raw workloads say the least physical work of a one-file-per-file design costs here.</p>';
  return `${html}</section>`;
}

function renderRaw(views, width) {
  const vs = views.filter((v) => v.raw);
  if (!vs.length) return '';
  const names = [...new Set(vs.flatMap((v) => v.raw.series.map((s) => s.name)))];
  const liveOnly = vs.every((v) => v.raw.live);
  const metric = (s) => (liveOnly ? s?.totalUs : s?.mean ?? null);
  const groups = names.map((name) => ({ label: name, items: vs.map((v, i) => ({ view: i, stat: metric(v.raw.series.find((s) => s.name === name)), missing: 'not run' })) }));
  let html = `<section class="suite" id="suite-raw"><h3>${SUITE_LABELS.raw}</h3>
    <p class="suite-desc">The physical floor on this device in this run: calls on one <code>FileSystemSyncAccessHandle</code> (4 KiB append and overwrite, 64 KiB and 1 MiB chunked appends of the same bytes, append+flush) and the new-file cycle (create+open, first write, close, delete), each timed per call. ${liveOnly ? 'While running: the wall time of each workload.' : 'Mean time per call in each run, median over runs.'}</p>
    ${legendHtml(vs)}${chartBlock('raw', chartSvg({ groups, viewLabels: vs.map((v) => v.label), unitLabel: liveOnly ? 'Workload wall time' : 'Mean per call', format: fmtDurationUs, tickFormat: fmtTickUs, scale: 'log', width }))}`;
  for (const v of vs.filter((x) => !x.raw.live)) {
    const head = '<tr><th scope="col">Workload</th><th scope="col">Calls</th><th scope="col">Bytes/call</th><th scope="col">Mean µs/call</th><th scope="col">p50</th><th scope="col">p90</th><th scope="col">p99</th><th scope="col">max</th><th scope="col">1st call</th><th scope="col">Total ms</th></tr>';
    const med = (s) => (s ? fmtUs(s.median) : '–');
    const body = v.raw.series.map((s) => `<tr><th scope="row">${esc(s.name)}</th><td>${isNum(s.calls) ? nf0.format(s.calls) : '–'}</td><td>${s.bytesPerCall ? nf0.format(s.bytesPerCall) : '–'}</td>${statCell(s.mean, { format: fmtUs })}<td>${med(s.p50)}</td><td>${med(s.p90)}</td><td>${med(s.p99)}</td><td>${med(s.max)}</td><td>${med(s.first)}</td><td>${s.totalUs ? fmtMs(s.totalUs.median / 1000) : '–'}</td></tr>`);
    html += `<div class="per-view-block"><h4><i class="swatch" style="background:${COLORS[vs.indexOf(v) % COLORS.length]}"></i>${esc(v.label)}</h4>${tableWrap(`Raw OPFS calls · per-call µs, median over ${v.raw.runs} run${v.raw.runs === 1 ? '' : 's'} (min–max under the mean) · ${esc(v.label)}`, head, body)}${derivedRaw(v)}</div>`;
  }
  return `${html}</section>`;
}

function renderHandoff(views) {
  const vs = views.filter((v) => v.handoff);
  if (!vs.length) return '';
  const c = vs[0].handoff.config;
  let html = `<section class="suite" id="suite-handoff"><h3>${SUITE_LABELS.handoff}</h3>
    <p class="suite-desc">Two installs of one shared volume (${esc(c.buffer_mode ?? '')} buffer mode, ${esc(c.durability ?? '')}) take turns in the page's worker through the Web Lock and the BroadcastChannel: <code>two-writers</code> alternate single-row autocommit INSERTs, <code>writer-reader</code> alternate an INSERT and a count that must see it; ${isNum(c.handoffs) ? nf0.format(c.handoffs) : '?'} hand-offs per workload per round. A hand-off's cost is what the alternating loop takes beyond the same statements on one install. The floor, in the same rounds: closing and reopening two OPFS sync access handles. ${vs[0].handoff.handles === 'concurrent' ? 'Our access handles here are concurrent (<code>readwrite-unsafe</code>): each install keeps its two open and the Web Lock alone takes turns, so a hand-off closes and opens none — the floor is a cost it does not pay.' : 'Our access handles here are exclusive: the giver closes its two and the taker opens them again at every hand-off.'} Two installs in one worker share the lock and channel paths of two tabs, not the process boundary. A JavaScript peer (wa-sqlite's OPFSCoopSyncVFS: two connections on two module instances, one database) runs the same workloads as one more part of the same rounds; its ratio pairs with the same round's floor.</p>`;
  const bytes = (s) => (s ? fmtBytes(Math.round(s.median)) : '–');
  const count = (s) => (s ? nf1.format(s.median) : '–');
  for (const v of vs) {
    const h = v.handoff;
    const head = '<tr><th scope="col">Workload</th><th scope="col">ms per hand-off</th><th scope="col">÷ floor [95 %]</th><th scope="col">Step (hand-off + statement)</th><th scope="col">Statement alone</th><th scope="col">Acquire (asked → held)</th><th scope="col">Giver’s release</th><th scope="col">Taker’s take-over</th><th scope="col">Calls / hand-off</th><th scope="col">Read / hand-off</th><th scope="col">Log replayed / hand-off</th><th scope="col">Wrong reads</th></tr>';
    const rows = h.workloads.map((w) => `<tr><th scope="row">${esc(w.workload)}</th>${statCell(w.handoff_ms)}<td class="cell">${esc(fmtRatioStat(w.ratio_to_floor) || '–')}</td>${statCell(w.step_ms)}${statCell(w.solo_step_ms)}${statCell(w.acquire_ms)}${statCell(w.release_ms)}${statCell(w.take_over_ms)}<td>${count(w.calls_per_handoff)}</td><td>${bytes(w.bytes_read_per_handoff)}</td><td>${bytes(w.catch_up_bytes_per_handoff)}</td><td>${isNum(w.mismatches) ? nf0.format(w.mismatches) : '–'}</td></tr>`);
    // The JavaScript peers' rows: the loop figures, the ratio and the reads (nothing else is measured for them).
    for (const p of h.peers) {
      for (const w of p.workloads) {
        rows.push(`<tr><th scope="row">${esc(w.workload)} <span class="sub">${esc(p.backend)} (peer)</span></th>${statCell(w.handoff_ms)}<td class="cell">${esc(fmtRatioStat(w.ratio_to_floor) || '–')}</td>${statCell(w.step_ms)}${statCell(w.solo_step_ms)}<td>–</td><td>–</td><td>–</td><td>–</td><td>–</td><td>–</td><td>${isNum(w.mismatches) ? nf0.format(w.mismatches) : '–'}</td></tr>`);
      }
    }
    rows.push(`<tr><th scope="row">floor <span class="sub">close + reopen 2 access handles</span></th>${statCell(h.floor)}<td>–</td><td>–</td><td>–</td><td>–</td><td>–</td><td>–</td><td>–</td><td>–</td><td>–</td><td>–</td></tr>`);
    html += `<div class="per-view-block"><h4><i class="swatch" style="background:${COLORS[vs.indexOf(v) % COLORS.length]}"></i>${esc(v.label)}</h4>${tableWrap(`Hand-off (ms): median over ${h.runs} round${h.runs === 1 ? '' : 's'} of per-round figures, min–max; ratio paired per round with the floor · ${esc(v.label)}`, head, rows, 'Acquire, release and take-over are single clock readings (rounded to the timer step); the per-hand-off cost and the floor are whole loops divided by their count. Calls are the volume’s counted reads, writes, flushes and size calls of both installs during the hand-offs; opening and closing handles is not among them.')}`;
    if (h.goals.length) {
      const ghead = '<tr><th scope="col">Goal</th><th scope="col">Paired ratio [95 %]</th><th scope="col">Verdict</th></tr>';
      const grows = h.goals.map((g) => `<tr><th scope="row">${esc(g.statement)}</th><td class="cell">${esc(fmtRatioStat(g.ratio) || '–')}</td><td>${verdictBadge(g.verdict)}</td></tr>`);
      html += tableWrap(`Hand-off goals · ${esc(v.label)}`, ghead, grows);
    }
    if (h.peerInfo.length) {
      const items = h.peerInfo.map((p) => {
        const state = p.skipped ? `skipped: ${esc(p.skipped)}` : p.error ? `<span class="fail">stopped: ${esc(p.error)}</span>` : 'ran in the same rounds';
        return `<li><strong>${esc(p.name)}</strong> (${esc([p.package, p.version].filter(Boolean).join(' '))}): ${state}. Two connections: ${esc(p.connections ?? '')}. Durability: ${esc(p.durability ?? '')}.</li>`;
      });
      html += `<ul class="run-notes">${items.join('')}</ul>`;
    }
    if (h.error) html += `<ul class="failures"><li class="fail-item"><strong>stopped:</strong> ${esc(h.error)}</li></ul>`;
    html += '</div>';
  }
  return `${html}</section>`;
}

const MIB = 1024 * 1024;
const fmtMiB = (b) => (isNum(b) ? nf2.format(b / MIB) : '–');
const nf3 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 3, maximumFractionDigits: 3 });
const fmtFactor = (r) => (isNum(r) ? nf3.format(r) : '–');

/** The scale suite's per-backend summaries shown, in order: [summary key, label, format]. */
const SCALE_ROWS = [
  ['build_ms', 'Build (ms)', fmtMs],
  ['bytes_written', 'Bytes written to build (MiB)', fmtMiB],
  ['logical_bytes', 'Logical size: pages × page size (MiB)', fmtMiB],
  ['stored_bytes', 'At rest after the build (MiB)', fmtMiB],
  ['space_ratio', 'At rest ÷ logical', fmtFactor],
  ['checkpoint_ms', 'Checkpoint (ms)', fmtMs],
  ['reopen_ms', 'Reopen (ms)', fmtMs],
  ['first_read_ms', 'First read, one row by key (ms)', fmtMs],
  ['scan_cold_ms', 'Full scan, cold (ms)', fmtMs],
  ['scan_warm_ms', 'Full scan, warm (ms)', fmtMs],
  ['autocommit_ms', 'Autocommit INSERT at size (ms each)', fmtMs],
  ['vacuum_ms', 'DROP TABLE + VACUUM (ms)', fmtMs],
  ['stored_after_vacuum', 'At rest after the VACUUM (MiB)', fmtMiB],
];

/** Labels of the paired measures (bench_results::scale::ScaleMeasure, snake_case in the JSON). */
const SCALE_MEASURES = {
  build: 'Build',
  bytes_written: 'Bytes written to build',
  reopen_and_first_read: 'Reopen + first read',
  scan_warm: 'Full scan, warm',
  autocommit: 'Autocommit INSERT at size',
};

function renderScale(views) {
  const vs = views.filter((v) => v.scale);
  if (!vs.length) return '';
  const c = vs.find((v) => !v.scale.live)?.scale.config ?? {};
  const size = isNum(c.rows) ? `A database of ${nf0.format(c.rows)} rows of ${nf0.format(c.row_bytes ?? 1000)} bytes${isNum(c.batch_rows) ? ` in transactions of ${nf0.format(c.batch_rows)}` : ''}` : 'A database of many rows';
  let html = `<section class="suite" id="suite-scale"><h3>${SUITE_LABELS.scale}</h3>
    <p class="suite-desc">${esc(size)} is built on each backend from a wiped state, then checkpointed where the backend has a checkpoint, closed, and its files' bytes read at rest; reopened, one row read by key (in Memory buffer mode this loads the whole file), the table scanned twice (cold, warm), ${isNum(c.autocommits) ? nf0.format(c.autocommits) : 'some'} autocommit INSERTs made at size, and the table dropped and the database vacuumed; the bytes at rest are read again. Every round runs every backend once, in a shuffled order. Ratios are paired per round with the baseline <code>${esc(c.baseline ?? 'sahpool')}</code> (one OPFS file per database), median with its 95 % bootstrap interval (none below six rounds). Logical size is SQLite's page count × page size.</p>`;
  for (const v of vs) {
    const sc = v.scale;
    const swatch = `<i class="swatch" style="background:${COLORS[vs.indexOf(v) % COLORS.length]}"></i>`;
    if (sc.live) {
      const rows = sc.build.map(([name, stat]) => `<tr><th scope="row">${esc(name)}</th>${statCell(stat)}</tr>`);
      html += `<div class="per-view-block"><h4>${swatch}${esc(v.label)}</h4>${tableWrap(`Build (ms) so far, measured rounds · ${esc(v.label)}`, '<tr><th scope="col">Backend</th><th scope="col">Build</th></tr>', rows)}</div>`;
      continue;
    }
    const backends = sc.backends;
    const th = (b) => `<th scope="col" title="${esc([b.durability, b.settings, b.pkg].filter(Boolean).join(' · '))}">${escWrap(b.name)}${b.isBaseline ? '<div class="sub">baseline</div>' : ''}${b.error ? '<div class="sub fail">failed</div>' : ''}</th>`;
    const head = `<tr><th scope="col"></th>${backends.map(th).join('')}</tr>`;
    const body = SCALE_ROWS.map(([key, label, format]) => `<tr><th scope="row">${esc(label)}</th>${backends
      .map((b) => statCell(b.summary[key] ?? null, { format, extra: b.summary[key] ? '' : `<span class="muted">${b.error && !b.summary.build_ms ? 'failed' : 'n/a'}</span>` }))
      .join('')}</tr>`);
    html += `<div class="per-view-block"><h4>${swatch}${esc(v.label)}</h4>${tableWrap(`Scale and space: median over ${sc.runs} round${sc.runs === 1 ? '' : 's'}, min–max · baseline ${esc(sc.config.baseline ?? '')} · ${esc(v.label)}`, head, body, 'n/a: the backend does not have or count it (the baseline has no checkpoint of its own and does not count the bytes it writes). At rest: every file the backend keeps for the database (ours: data file and log; the baseline: its pool of files with their 4 KiB headers).')}`;
    const ours = backends.filter((b) => !b.isBaseline);
    const measures = Object.keys(SCALE_MEASURES).filter((m) => sc.ratios.some((r) => r.measure === m));
    if (measures.length && ours.length) {
      const rhead = `<tr><th scope="col">Measure</th>${ours.map((b) => `<th scope="col">${escWrap(b.name)} ÷ ${escWrap(sc.config.baseline ?? '')}</th>`).join('')}</tr>`;
      const rrows = measures.map((m) => `<tr><th scope="row">${esc(SCALE_MEASURES[m])}</th>${ours
        .map((b) => `<td class="cell">${esc(fmtRatioStat(sc.ratios.find((r) => r.backend === b.name && r.measure === m)?.ratio) || '–')}</td>`)
        .join('')}</tr>`);
      html += tableWrap(`Paired ratio to ${esc(sc.config.baseline ?? 'the baseline')} [95 %] · ${esc(v.label)}`, rhead, rrows);
    }
    if (sc.goals.length) {
      const ghead = '<tr><th scope="col">Goal</th><th scope="col">Ratio [95 %]</th><th scope="col">Verdict</th></tr>';
      const grows = sc.goals.map((g) => `<tr><th scope="row">${esc(g.statement)}</th><td class="cell">${esc(fmtRatioStat(g.ratio) || '–')}</td><td>${verdictBadge(g.verdict)}</td></tr>`);
      html += tableWrap(`Scale goals · ${esc(v.label)}`, ghead, grows, 'scale-space and scale-vacuum are per-run ratios of each of our backends (the interval over its rounds); scale-bytes-written and scale-scan-disk are paired with the baseline, and appear only where the baseline counts the measure.');
    }
    const failed = backends.filter((b) => b.error);
    if (failed.length) html += `<ul class="failures">${failed.map((b) => `<li class="fail-item"><strong>${esc(b.name)}:</strong> ${esc(b.error)}</li>`).join('')}</ul>`;
    html += '</div>';
  }
  return `${html}</section>`;
}

/** "Derived" lines as in the seed, from the document's `raw.derived` (computed in Rust). */
function derivedRaw(v) {
  const d = v.raw.derived;
  if (!d) return '';
  const lines = [];
  if (isNum(d.call_floor_us)) lines.push(`Fixed per-call floor (small-overwrite, size never changes): ${fmtUs(d.call_floor_us)} µs/call`);
  if (isNum(d.growth_us)) lines.push(`Extra cost when the write grows the file (append − overwrite): ${fmtUs(d.growth_us)} µs/call`);
  for (const c of d.chunking ?? []) {
    lines.push(`Same bytes in ${esc(c.series.replace(/^chunked-append\s*\(?|\)$/g, ''))} calls: the 4 KiB calls take ${fmtRatio(c.ratio)} as long in total`);
  }
  if (isNum(d.flush_us)) lines.push(`append+flush: flush: ${fmtDurationUs(d.flush_us)} per call (a flush is worth ${isNum(d.flush_in_small_writes) ? nf0.format(d.flush_in_small_writes) : '?'} small writes)`);
  if (isNum(d.new_file_cycle_us)) lines.push(`New-file cycle: ${fmtDurationUs(d.new_file_cycle_us)} per file. A one-OPFS-file-per-file design pays this for each file it creates and deletes.`);
  if (!lines.length) return '';
  return `<ul class="derived">${lines.map((l) => `<li>${l}</li>`).join('')}</ul>`;
}

function renderVerifications(views) {
  const v = views.find((x) => x.origin === 'current' && x.doc);
  if (!v) return '';
  const ver = v.doc.verifications ?? { all_passed: false, passed: [], failures: [] };
  const badge = ver.all_passed ? '<span class="pass">all verifications passed</span>' : '<span class="fail">verification failures</span>';
  const failures = (ver.failures ?? []).map((f) => `<li class="fail-item"><strong>${esc(f.suite)}${f.backend ? ` · ${esc(f.backend)}` : ''}:</strong> ${esc(f.message)}</li>`).join('');
  const passed = (ver.passed ?? []).map((p) => `<li>${esc(p)}</li>`).join('');
  const notes = (v.doc.notes ?? []).map((n) => `<li>${esc(n)}</li>`).join('');
  return `<section class="suite" id="verifications"><h3>Verifications ${badge}</h3>
    ${failures ? `<ul class="failures">${failures}</ul>` : ''}
    ${passed ? `<details><summary>${(ver.passed ?? []).length} checks passed</summary><ul class="passed">${passed}</ul></details>` : ''}
    ${notes ? `<ul class="run-notes">${notes}</ul>` : ''}
    <p class="muted small">Run took ${fmtElapsed(v.doc.duration_ms ?? 0)} · generated ${esc(v.doc.generated_at ?? '')} · preset ${esc(v.doc.config?.preset ?? '')}, R=${esc(v.doc.config?.runs ?? '')}${isNum(v.doc.config?.peer_runs) ? ` (JavaScript peers: the first ${esc(v.doc.config.peer_runs)})` : ''}, warm-up ${esc(v.doc.config?.warmup ?? '')}.</p></section>`;
}

const ENV_ROWS = [
  ['Browser', (e) => [e.browser, e.browser_version].filter(Boolean).join(' ')],
  ['Platform', (e) => e.os],
  ['Logical CPUs (hardwareConcurrency)', (e) => e.cpu_count],
  ['Device memory', (e) => (isNum(e.device_memory_gb) ? `${e.device_memory_gb} GB (rounded by the browser)` : null)],
  ['performance.now() step in the worker', (e) => (isNum(e.timer_resolution_us) ? `${fmtUs(e.timer_resolution_us)} µs` : null)],
  ['Cross-origin isolated', (e) => yesNo(e.cross_origin_isolated)],
  ['Secure context', (e) => yesNo(e.secure_context)],
  ['OPFS available', (e) => yesNo(e.opfs_available)],
  ['Storage used / quota', (e) => (isNum(e.storage_usage_bytes) ? `${fmtBytes(e.storage_usage_bytes)} of ${fmtBytes(e.storage_quota_bytes)}` : null)],
  ['Storage persisted', (e) => yesNo(e.storage_persisted)],
  ['SQLite', (e) => e.sqlite_version],
  ['Build commit', (e) => e.commit],
  ['User agent', (e) => e.user_agent],
];

const yesNo = (b) => (b === true ? 'yes' : b === false ? 'no' : null);

function renderEnvironment(views, pending) {
  const cols = views.filter((v) => v.env);
  if (!cols.length && pending) cols.push({ label: 'This browser', env: pending });
  if (!cols.length) return '<p class="muted">Waiting for the worker…</p>';
  const head = `<tr><th scope="col"></th>${cols.map((v) => `<th scope="col">${esc(v.label)}</th>`).join('')}</tr>`;
  const rows = ENV_ROWS.map(([label, f]) => `<tr><th scope="row">${label}</th>${cols.map((v) => `<td class="env">${esc(f(v.env) ?? '–')}</td>`).join('')}</tr>`);
  return tableWrap('Environment as the benchmark worker saw it', head, rows, '', 'env-table');
}

// ---------------------------------------------------------------------------------------
// Rendering all views
// ---------------------------------------------------------------------------------------

let current = null; // the view of this page's latest result document
const loaded = []; // views of loaded result files
let workerEnv = null;

function allViews() {
  const out = [];
  if (bench.state === 'running' && live) out.push(liveView());
  else if (current) out.push(current);
  out.push(...loaded);
  return out;
}

/** The inner width of a chart box inside a suite section, measured with a probe. */
function chartWidth() {
  const probe = document.createElement('section');
  probe.className = 'suite';
  probe.style.visibility = 'hidden';
  probe.innerHTML = '<div class="chart-box"></div>';
  $('#results-body').append(probe);
  const w = probe.firstElementChild.clientWidth;
  probe.remove();
  return Math.min(w || 800, 1100);
}

function render() {
  const views = allViews();
  const body = $('#results-body');
  const width = chartWidth();
  const html = [renderVerifications(views), renderSql(views, width), renderBatch(views, width), renderFs(views, width), renderRaw(views, width), renderHandoff(views), renderScale(views)].join('');
  body.innerHTML = html || '<p class="muted empty">No results yet. Choose a preset and press Start, or load a result JSON.</p>';
  $('#environment-body').innerHTML = renderEnvironment(views.filter((v) => !v.live || v.env), workerEnv);
  $('#loaded').innerHTML = loaded
    .map((v, i) => `<span class="chip"><i class="swatch" style="background:${COLORS[(views.indexOf(v)) % COLORS.length]}"></i>${esc(v.label)}<button type="button" data-unload="${i}" aria-label="Remove ${esc(v.label)}">×</button></span>`)
    .join('');
  $('#download').disabled = !current;
}

const renderSoon = (() => {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    setTimeout(() => {
      queued = false;
      render();
    }, 250);
  };
})();

/** Resolves after the browser has had a chance to paint what render() produced. */
const painted = () =>
  new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        resolve();
      }
    };
    requestAnimationFrame(() => setTimeout(finish, 0));
    setTimeout(finish, 200); // rAF does not run in hidden tabs
  });

// ---------------------------------------------------------------------------------------
// Controls
// ---------------------------------------------------------------------------------------

let presets = null;
let backendInfo = null;
const form = $('#run-form');

function backendNames() {
  if (!backendInfo) return [];
  const seen = new Map();
  for (const [suite, list] of Object.entries(backendInfo)) {
    if (suite === 'raw' || !Array.isArray(list)) continue;
    for (const b of list) {
      if (!seen.has(b.name)) seen.set(b.name, { ...b, suites: [] });
      seen.get(b.name).suites.push({ sql: 'SQL', fs: 'FS', scale: 'scale' }[suite] ?? suite);
    }
  }
  return [...seen.values()];
}

function renderBackendList() {
  const list = backendNames();
  $('#backend-list').innerHTML = list
    .map((b) => {
      const peer = b.package && !b.name.startsWith('ours-') && !['sqlite-memvfs', 'sahpool'].includes(b.name);
      const title = [b.durability, b.durability_settings, [b.package, b.version].filter(Boolean).join(' '), b.skipped && `not available: ${b.skipped}`].filter(Boolean).join(' · ');
      const tags = [...b.suites, peer ? 'peer' : null, b.engine === 'pglite' ? 'PGlite' : null].filter(Boolean);
      // A skipped peer stays selected (it is listed with its reason in the result) but cannot run.
      return `<label title="${esc(title)}"${b.skipped ? ' class="muted"' : ''}><input type="checkbox" name="backend" value="${esc(b.name)}" checked${b.skipped ? ' disabled' : ''}> ${esc(b.name)} <span class="tag">${tags.join(' · ')}</span>${b.skipped ? ' <span class="tag">unavailable</span>' : ''}</label>`;
    })
    .join('');
}

function applyPreset(name) {
  const p = presets?.[name];
  if (!p) return;
  for (const key of ['runs', 'warmup', 'files', 'sql_scale', 'raw_small_calls', 'raw_cycle_calls']) {
    form.elements[key].value = p[key];
  }
  form.elements.fs_runs.value = p.fs_runs ?? p.runs;
  // The precision target in percent (0: exactly R rounds).
  form.elements.target_pct.value = p.target_half_width ? +(p.target_half_width * 100).toFixed(3) : 0;
  form.elements.scale_rows.value = p.scale_rows ?? form.elements.scale_rows.defaultValue;
  // RunConfig::scale_rounds(): its own count, else the lifecycle's.
  form.elements.scale_runs.value = p.scale_runs ?? p.fs_runs ?? p.runs;
  // Blank: the JavaScript peers run in every round.
  form.elements.peer_runs.value = p.peer_runs ?? '';
  $('#preset-note').textContent = name === 'full'
    ? `Full: SQL rounds until every 16-case total ratio is within ±${+(p.target_half_width * 100).toFixed(1)} % (at most ${p.runs}; each round runs every backend once, the JavaScript peers only in the first ${p.peer_runs ?? p.runs}): 10–15 minutes per browser on a quiet 2-core machine, hours on a loaded one. Quick checks that everything works.`
    : name === 'phone' && isPhone() ? 'Phone detected: fewer files and rounds by default.' : '';
  $$('.preset').forEach((b) => b.classList.toggle('active', b.dataset.preset === name));
  form.dataset.preset = name;
}

/** The URL's backend filters (`?backends=a,b`), or null for none or `all`. */
function urlBackendFilters() {
  const backends = params.get('backends');
  if (!backends || backends === 'all') return null;
  return backends.split(',').map((s) => s.trim()).filter(Boolean);
}

/** `selected`: the backend names the worker picked for `urlBackendFilters()` (null: leave all). */
function applyUrlParams(params, selected) {
  const preset = params.get('preset');
  if (preset && presets?.[preset]) applyPreset(preset);
  const suites = params.get('suites');
  if (suites) {
    const wanted = new Set(suites.split(',').map((s) => s.trim()));
    $$('input[name=suite]').forEach((c) => (c.checked = wanted.has(c.value)));
  }
  if (selected) {
    const chosen = new Set(selected);
    $$('input[name=backend]').forEach((c) => (c.checked = chosen.has(c.value)));
  }
  for (const key of ['runs', 'files', 'warmup', 'sql_scale', 'fs_runs', 'peer_runs', 'scale_rows', 'scale_runs', 'target_pct']) {
    const v = params.get(key);
    if (v !== null && v !== '') form.elements[key].value = v;
  }
  // `runs` alone (no fs_runs, no peer_runs, no scale_runs) means every suite and every backend in
  // every round, as in the Rust request.
  if (params.get('runs') && !params.get('fs_runs')) form.elements.fs_runs.value = params.get('runs');
  if (params.get('runs') && !params.get('scale_runs')) form.elements.scale_runs.value = params.get('runs');
  if (params.get('runs') && !params.get('peer_runs')) form.elements.peer_runs.value = '';
  if (params.get('runs') && !params.get('target_pct')) form.elements.target_pct.value = 0;
}

/** The form's precision target as a fraction (0: exactly R rounds). */
function targetHalfWidth() {
  const pct = Number(form.elements.target_pct.value || 0);
  if (!Number.isFinite(pct) || pct < 0 || pct > 100) throw new Error('Stop at ± % must be 0–100');
  return pct / 100;
}

/** A seed from the URL: a whole number JavaScript holds exactly (at most 2^53 − 1), else an
 *  error, never a silently rounded seed. */
function urlSeed(key) {
  const v = Number(params.get(key));
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${key} must be a whole number from 0 to 2^53 − 1`);
  return v;
}

function readConfig() {
  const suites = $$('input[name=suite]:checked').map((c) => c.value);
  const boxes = $$('input[name=backend]');
  const chosen = boxes.filter((c) => c.checked).map((c) => c.value);
  if (!suites.length) throw new Error('Select at least one suite.');
  if (!chosen.length && suites.some((s) => s !== 'raw' && s !== 'handoff')) throw new Error('Select at least one backend.');
  const int = (key) => {
    const v = Number(form.elements[key].value);
    if (!Number.isInteger(v)) throw new Error(`${key} must be a whole number`);
    return v;
  };
  return {
    preset: form.dataset.preset || 'full',
    suites,
    backends: chosen.length === boxes.length || !chosen.length ? ['all'] : chosen,
    runs: int('runs'),
    target_half_width: targetHalfWidth(),
    fs_runs: int('fs_runs'),
    // Blank: every round (a cap at or above `runs` is no cap).
    peer_runs: form.elements.peer_runs.value.trim() === '' ? int('runs') : int('peer_runs'),
    warmup: int('warmup'),
    files: int('files'),
    sql_scale: int('sql_scale'),
    raw_small_calls: int('raw_small_calls'),
    raw_cycle_calls: int('raw_cycle_calls'),
    scale_rows: int('scale_rows'),
    scale_runs: int('scale_runs'),
    // Only from the URL (absent: the preset's).
    ...(params.get('batch_repeats') ? { batch_repeats: Number(params.get('batch_repeats')) } : {}),
    ...(params.get('fs_repeats') ? { fs_repeats: Number(params.get('fs_repeats')) } : {}),
    ...(params.get('order_seed') ? { order_seed: urlSeed('order_seed') } : {}),
    ...(params.get('call_timing') === '1' ? { call_timing: true } : {}),
    commit: commit || null,
  };
}

function setStatus(text) {
  $('#status').textContent = text;
}

// ---------------------------------------------------------------------------------------
// The worker
// ---------------------------------------------------------------------------------------

const params = new URLSearchParams(location.search);
const commit = params.get('commit') || '';
const moduleWorkers = supportsModuleWorker();
let worker = null;
let workerReady = null;
let elapsedTimer = 0;
let runStarted = 0;

function failRun(message) {
  clearInterval(elapsedTimer);
  bench.error = message;
  bench.state = 'error';
  console.error(`benchmark: ${message}`);
  setStatus(`Error: ${message}`);
  $('#start').textContent = 'Start';
  $('#start').disabled = !backendInfo;
  live = null;
  render();
}

/** Starts a worker and resolves with its 'ready' message. */
function startWorker() {
  if (worker) return workerReady;
  if (!moduleWorkers) return Promise.reject(new Error('this browser has no module workers'));
  worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  const w = worker;
  workerReady = new Promise((resolve, reject) => {
    w.addEventListener('message', ({ data }) => {
      if (data.type === 'ready') resolve(data);
      else if (data.type === 'fatal') reject(new Error(data.error));
    });
    w.addEventListener('error', (e) => {
      e.preventDefault();
      reject(new Error(`the worker failed to load: ${e.message || 'script error (is pkg/ built?)'}`));
    });
  });
  w.addEventListener('message', ({ data }) => onWorkerMessage(w, data));
  w.addEventListener('error', (e) => {
    if (w === worker && bench.state === 'running') failRun(`worker error: ${e.message || 'unknown'}`);
  });
  w.postMessage({ type: 'hello', commit, backends: urlBackendFilters() });
  return workerReady;
}

function stopWorker() {
  if (worker) worker.terminate();
  worker = null;
  workerReady = null;
  for (const { reject } of pendingLoads.values()) reject(new Error('the worker was stopped'));
  pendingLoads.clear();
}

function onWorkerMessage(w, data) {
  if (w !== worker) return;
  switch (data.type) {
    case 'progress':
      bench.progress = data.progress;
      recordLive(data.progress);
      showProgress(data.progress);
      if (data.progress.status === 'end') renderSoon();
      break;
    case 'selection':
      if (live) live.selected = new Set(data.names);
      renderSoon();
      break;
    case 'result':
      finishRun(data.result, data.json);
      break;
    case 'calibrated': {
      const pending = pendingLoads.get(data.id);
      pendingLoads.delete(data.id);
      if (pending) pending.resolve(data.samples_ms);
      break;
    }
    case 'loaded': {
      const pending = pendingLoads.get(data.id);
      pendingLoads.delete(data.id);
      if (pending && data.error) pending.reject(new Error(data.error));
      else if (pending) pending.resolve(data.result);
      break;
    }
    case 'fatal':
      if (bench.state === 'running') failRun(data.error);
      stopWorker();
      break;
    case 'console-error':
      console.error(`worker: ${data.message}`);
      break;
    default:
      break;
  }
}

function showProgress(p) {
  const bar = $('#progress');
  bar.max = Math.max(1, p.total_steps);
  bar.value = Math.min(p.done_steps, bar.max);
  const suite = SUITE_LABELS[p.suite] ?? p.suite;
  const run = `${p.warmup ? 'warm-up' : 'run'} ${p.run}`;
  const what = p.status === 'end' ? `finished in ${fmtMs(p.ms)} ms` : 'running…';
  $('#progress-text').textContent = `${suite} · ${p.backend} · ${p.case} · ${run} · ${what} (${p.done_steps}/${p.total_steps})`;
}

async function startRun() {
  let config;
  try {
    config = readConfig();
  } catch (e) {
    setStatus(e.message);
    if (autorun) failRun(e.message);
    return;
  }
  bench.state = 'running';
  bench.result = null;
  bench.resultJson = null;
  bench.error = null;
  bench.progress = null;
  current = null;
  $('#start').textContent = 'Stop';
  $('#progress-panel').hidden = false;
  $('#progress').value = 0;
  $('#progress-text').textContent = 'Starting the worker…';
  runStarted = performance.now();
  clearInterval(elapsedTimer);
  elapsedTimer = setInterval(() => {
    $('#progress-elapsed').textContent = `elapsed ${fmtElapsed(performance.now() - runStarted)}`;
  }, 500);
  setStatus('Running. Keep this tab in the foreground: background tabs are throttled.');
  try {
    const ready = await startWorker();
    if (bench.state !== 'running') return;
    workerEnv = ready.environment;
    live = newLive(ready.environment, config);
    render();
    worker.postMessage({ type: 'run', config });
  } catch (e) {
    stopWorker();
    failRun(e.message);
  }
}

/** `json`: the document as Rust wrote it. `doc` is its parse, for drawing only: JavaScript
 * numbers lose integers above 2^53 (the bootstrap seed), so the text is what leaves the page
 * (`bench.resultJson` for the runner, the download). */
async function finishRun(doc, json) {
  clearInterval(elapsedTimer);
  const label = `${browserLabel(doc.environment)} · this run`;
  current = viewOfDocument(doc, label, 'current');
  current.json = json;
  bench.result = doc;
  bench.resultJson = json;
  live = null;
  // The worker holds nothing after a run, but a fresh one per run keeps runs independent.
  stopWorker();
  $('#start').textContent = 'Start';
  $('#start').disabled = false;
  $('#progress').value = $('#progress').max;
  $('#progress-text').textContent = `Done in ${fmtElapsed(doc.duration_ms ?? performance.now() - runStarted)}.`;
  const ok = doc.verifications?.all_passed;
  setStatus(ok ? 'Done: all verifications passed.' : 'Done, with failures: see Verifications.');
  // Automation: the results view is rendered (and painted) before the state says done.
  render();
  await painted();
  bench.state = 'done';
}

function stopRun() {
  stopWorker();
  clearInterval(elapsedTimer);
  live = null;
  bench.state = 'idle';
  $('#start').textContent = 'Start';
  $('#progress-text').textContent = `Stopped after ${fmtElapsed(performance.now() - runStarted)}.`;
  setStatus('Stopped. Nothing was kept from the interrupted run.');
  render();
}

// ---------------------------------------------------------------------------------------
// Download and load
// ---------------------------------------------------------------------------------------

function download() {
  if (!current?.doc) return;
  const doc = current.doc;
  const env = doc.environment ?? {};
  const date = (doc.generated_at ?? new Date().toISOString()).slice(0, 10);
  const browser = `${env.browser ?? 'browser'}-${String(env.browser_version ?? '').split('.')[0]}`.toLowerCase().replace(/[^a-z0-9.-]+/g, '-');
  const blob = new Blob([current.json ?? JSON.stringify(doc, null, 2)], { type: 'application/json' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `opfs-vfs-bench-${date}-${browser}.json`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

// Loaded files go through the worker's `load_document` (Rust): it converts older versions and
// computes every summary, so the page draws loaded files exactly like its own results.
const pendingLoads = new Map();
let loadId = 0;

async function convertInWorker(text) {
  await startWorker();
  const id = ++loadId;
  const answer = new Promise((resolve, reject) => pendingLoads.set(id, { resolve, reject }));
  worker.postMessage({ type: 'load', id, text });
  return answer;
}

// Automation (bench-runner's phone emulation): the worker's calibration loop times, ms.
bench.calibrate = async () => {
  if (bench.state === 'running') throw new Error('a run is in progress');
  await startWorker();
  const id = ++loadId;
  const answer = new Promise((resolve, reject) => pendingLoads.set(id, { resolve, reject }));
  worker.postMessage({ type: 'calibrate', id });
  return answer;
};

async function loadFiles(files) {
  if (bench.state === 'running') {
    // Converting a file is CPU work in the benchmark's worker: never during a measurement.
    setStatus('A run is in progress: load result files when it has finished.');
    return;
  }
  for (const file of files) {
    try {
      const doc = await convertInWorker(await file.text());
      const date = doc.generated_at ? ` · ${String(doc.generated_at).slice(0, 10)}` : '';
      loaded.push(viewOfDocument(doc, `${browserLabel(doc.environment, doc)}${date} · ${file.name}`, 'loaded'));
      setStatus(`Loaded ${file.name}${doc.upgraded_from ? ` (schema ${doc.upgraded_from}, converted)` : ''}.`);
    } catch (e) {
      setStatus(`Could not load ${file.name}: ${e.message}`);
    }
  }
  render();
}

// ---------------------------------------------------------------------------------------
// Start-up
// ---------------------------------------------------------------------------------------

const autorun = params.get('autorun') === '1';

form.addEventListener('submit', (e) => {
  e.preventDefault();
  if (bench.state === 'running') stopRun();
  else startRun();
});
$$('.preset').forEach((b) => b.addEventListener('click', () => applyPreset(b.dataset.preset)));
$('#backends-all').addEventListener('click', () => $$('input[name=backend]').forEach((c) => (c.checked = true)));
$('#backends-none').addEventListener('click', () => $$('input[name=backend]').forEach((c) => (c.checked = false)));
$('#download').addEventListener('click', download);
$('#load').addEventListener('change', (e) => {
  loadFiles([...e.target.files]);
  e.target.value = '';
});
$('#loaded').addEventListener('click', (e) => {
  const i = e.target.dataset?.unload;
  if (i !== undefined) {
    loaded.splice(Number(i), 1);
    render();
  }
});
let lastWidth = window.innerWidth;
window.addEventListener(
  'resize',
  debounce(() => {
    if (window.innerWidth !== lastWidth) {
      lastWidth = window.innerWidth;
      render();
    }
  }, 150),
);
// Firefox keeps a page in the back-forward cache with its worker and the worker's OPFS
// handles: the next page's worker would find the directories busy. Release them on pagehide.
window.addEventListener('pagehide', () => {
  if (bench.state === 'running') stopRun();
  stopWorker();
});
window.addEventListener('pageshow', (e) => {
  if (e.persisted && !worker) startWorker().catch(() => {});
});

async function main() {
  if (commit) $('#footer-build').textContent = `Build ${commit}. `;
  await checkEnvironment();
  try {
    const ready = await startWorker();
    presets = ready.presets;
    backendInfo = ready.backends;
    workerEnv = ready.environment;
    renderBackendList();
    const phone = isPhone();
    applyPreset(phone ? 'phone' : 'full');
    applyUrlParams(params, ready.selected);
    if (isNum(workerEnv?.timer_resolution_us) && workerEnv.timer_resolution_us > 20) {
      setWarning('timer', `The worker's timer step is ${fmtUs(workerEnv.timer_resolution_us)} µs: per-call figures shorter than that are rounded.`);
    }
    $('#start').disabled = false;
    setStatus('Ready.');
    render();
    if (autorun) startRun();
  } catch (e) {
    setStatus(`The benchmark worker could not start: ${e.message}`);
    stopWorker();
    if (autorun) failRun(e.message);
    else console.error(`benchmark worker: ${e.message}`);
    render();
  }
}

main();
