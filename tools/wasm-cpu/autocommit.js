// Test 1's shape in one build: CPU per autocommit (writes + commit - storage calls), in ns,
// the median of R rounds of N commits each (the first two rounds warm the JIT).
//   node autocommit.js DIR [commits] [rounds]
const m = require(require('path').resolve(process.argv[2], 'wasm_cpu.js'));
const N = +(process.argv[3] || 1000), R = +(process.argv[4] || 20);
for (const memory of [false, true]) {
  const xs = [], parts = [];
  for (let r = 0; r < R; r++) {
    const [w, c, calls, checkpoints] = m.bench_autocommit(memory, N);
    if (checkpoints !== 0) throw new Error('a checkpoint ran inside the timing');
    xs.push(w + c - calls); parts.push([w, c, calls]);
  }
  const s = xs.slice(2).map((x, i) => [x, i + 2]).sort((a, b) => a[0] - b[0]);
  const [med, i] = s[s.length >> 1];
  const [w, c, calls] = parts[i];
  console.log(`${memory ? 'Memory' : 'Disk'}: ${med.toFixed(0)} ns per commit (writes ${w.toFixed(0)}, commit ${c.toFixed(0)}, calls ${calls.toFixed(0)})`);
}
