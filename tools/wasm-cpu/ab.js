// Interleaved A/B of two builds of this crate (each `wasm-bindgen --target nodejs` output),
// in one process: per round, both builds run Memory and Disk mode at Balanced, in alternating
// order. Prints the median CPU per 8 KiB page (writes + commit - storage calls), in ns.
//   node ab.js A_DIR B_DIR [pages per transaction] [transactions] [rounds]
const [a, b] = [process.argv[2], process.argv[3]].map((d) => require(require('path').resolve(d, 'wasm_cpu.js')));
const P = +(process.argv[4] || 128), T = +(process.argv[5] || 16), R = +(process.argv[6] || 30);
const res = {};
for (let r = 0; r < R; r++) {
  const order = r % 2 ? [['A', a], ['B', b]] : [['B', b], ['A', a]];
  for (const [label, m] of order) {
    for (const memory of [true, false]) {
      const [w, c, calls, checkpoints] = m.bench(memory, true, P, T);
      if (checkpoints !== 0) throw new Error('a checkpoint ran inside the timing');
      const key = `${label} ${memory ? 'Memory' : 'Disk'}`;
      (res[key] = res[key] || []).push(w + c - calls);
    }
  }
}
// The first two rounds warm the JIT and the heap.
const median = (xs) => { const s = xs.slice(2).sort((x, y) => x - y); return s[s.length >> 1]; };
for (const k of Object.keys(res).sort()) console.log(`${k}: ${median(res[k]).toFixed(0)} ns per page`);
