// The article's herd.mjs (seeds/000, "測定台を作る"), unchanged in its loop,
// with nextDelay and the seed passed in, and the t50 it also reports. It is
// here for one purpose: scripts/bench.sh times it beside the Go simulator on
// the same machine. Not used by any test.
//
// node scripts/reference/herd.mjs            prints table 1 on seeds 206–210
// node scripts/reference/herd.mjs bench      prints ms per run of each row
const N = 2000, RECOVER_MS = 30000, CAPACITY_PER_SEC = 120, TICK = 100;
const CAP_TICK = CAPACITY_PER_SEC * TICK / 1000, BASE = 1000, CAP = 60000;
function mulberry32(a) {
  return function () {
    a |= 0; a = a + 0x6D2B79F5 | 0;
    let t = Math.imul(a ^ a >>> 15, 1 | a);
    t = t + Math.imul(t ^ t >>> 7, 61 | t) ^ t;
    return ((t ^ t >>> 14) >>> 0) / 4294967296;
  };
}
function run(nextDelay, seed) {
  const rand = mulberry32(seed);
  const next = new Float64Array(N), att = new Int32Array(N), prev = new Float64Array(N), done = new Uint8Array(N);
  for (let i = 0; i < N; i++) { next[i] = rand() * 2000; prev[i] = BASE; }
  let sentAfterRecovery = 0, ok = 0, peak = 0, t99 = -1, t50 = -1;
  for (let t = 0; t < 1200000; t += TICK) {
    const arrivals = [];
    for (let i = 0; i < N; i++) if (!done[i] && next[i] <= t) arrivals.push(i);
    const up = t >= RECOVER_MS;
    if (up) { sentAfterRecovery += arrivals.length; const qps = arrivals.length * 1000 / TICK; if (qps > peak) peak = qps; }
    let budget = up ? CAP_TICK : 0;
    for (const i of arrivals) {
      if (budget >= 1) { budget--; done[i] = 1; ok++; }
      else { att[i]++; const d = nextDelay(att[i], prev[i], rand); prev[i] = d; next[i] = t + d; }
    }
    if (t50 < 0 && ok >= N * 0.5) t50 = t;
    if (t99 < 0 && ok >= N * 0.99) t99 = t;
    if (ok === N) break;
  }
  return { sentAfterRecovery, ok, peak: Math.round(peak), t50, t99 };
}
const table1 = {
  'fixed-5s': () => 5000,
  'exponential': (a) => Math.min(CAP, BASE * 2 ** a),
  'full-jitter': (a, p, r) => r() * Math.min(CAP, BASE * 2 ** a),
  'equal-jitter': (a, p, r) => { const d = Math.min(CAP, BASE * 2 ** a); return d / 2 + r() * d / 2; },
  'decorrelated': (a, p, r) => Math.min(CAP, BASE + r() * (Math.max(2 * BASE, 3 * p) - BASE)),
};
if (process.argv[2] === 'bench') {
  const reps = Number(process.argv[3] || 50);
  for (const [name, f] of Object.entries(table1)) {
    for (let i = 0; i < 10; i++) run(f, 206 + i % 5); // let the JIT settle
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) run(f, 206 + i % 5);
    console.log(`${name} ${(Number(process.hrtime.bigint() - t0) / reps / 1e6).toFixed(3)} ms/run`);
  }
} else {
  for (const [name, f] of Object.entries(table1)) {
    const rs = [206, 207, 208, 209, 210].map(s => run(f, s));
    const m = k => rs.reduce((x, r) => x + r[k], 0) / rs.length;
    console.log(name, Math.round(m('sentAfterRecovery')), Math.round(m('peak')), (m('t50') / 1000).toFixed(1), (m('t99') / 1000).toFixed(1));
  }
}
