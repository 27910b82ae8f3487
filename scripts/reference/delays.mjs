// Expected delays of the policy families, computed in JavaScript: every
// operation rounds to float64 on its own (JavaScript never fuses a multiply
// and an add), so these are the values a Go build must give on any CPU.
// The article's families follow herd.mjs's formulas (scripts/reference/
// herd.mjs and the article's text); the libraries' families are written from
// their formulas in sim/families.go, with Go's own integer power (repeated
// squaring, math.Pow for a whole exponent) so that a multiplier like 1.6 is
// rounded as Go rounds it. polly-v2 is not here: its exp2 and tanh are pinned
// in sim/cpu_test.go.
//
// node scripts/reference/delays.mjs > sim/testdata/delays_js.txt
//
// Each output line: kind base_ms cap_ms multiplier width honor seed ra_ms up: delays…
function mulberry32(a) {
  return function () {
    a |= 0; a = a + 0x6D2B79F5 | 0;
    let t = Math.imul(a ^ a >>> 15, 1 | a);
    t = t + Math.imul(t ^ t >>> 7, 61 | t) ^ t;
    return ((t ^ t >>> 14) >>> 0) / 4294967296;
  };
}

const dv = new DataView(new ArrayBuffer(8));
function frexp(x) { // x > 0, normal: x = f·2^e, f in [0.5, 1)
  dv.setFloat64(0, x);
  const hi = dv.getUint32(0);
  const e = ((hi >>> 20) & 0x7ff) - 1022;
  dv.setUint32(0, (hi & 0x800fffff) | (1022 << 20));
  return [dv.getFloat64(0), e];
}
function pow2(e) { // 2^e for a normal result, exactly
  dv.setUint32(0, (e + 1023) << 20); dv.setUint32(4, 0);
  return dv.getFloat64(0);
}
// powInt is Go's math.Pow(x, n) for x > 0 and a whole n ≥ 0.
function powInt(x, n) {
  if (n === 0 || x === 1) return 1;
  if (n === 1) return x;
  let a1 = 1, ae = 0;
  let [x1, xe] = frexp(x);
  for (let i = n; i !== 0; i = Math.floor(i / 2)) {
    if (i % 2 === 1) { a1 *= x1; ae += xe; }
    x1 *= x1; xe *= 2;
    if (x1 < 0.5) { x1 += x1; xe--; }
  }
  return a1 * pow2(ae);
}
const minf = (a, b) => (b < a ? b : a);
const maxf = (a, b) => (b > a ? b : a);

function installOffset(i) {
  let h = 2166136261;
  for (const ch of 'install-' + i) { h ^= ch.charCodeAt(0); h = Math.imul(h, 16777619) >>> 0; }
  return (h % 100000) / 100000;
}

// delayer(p) returns (c, r, rand) → delay, c = {att, prev}, r = {ra, up, index}.
function delayer(p) {
  const cap = p.cap === 0 ? Infinity : p.cap;
  const at = (n) => minf(cap, p.base * powInt(p.mult, n));
  const decorrelated = (c, rand) => {
    const v = minf(cap, p.base + rand() * (maxf(2 * p.base, 3 * c.prev) - p.base));
    c.prev = v;
    return v;
  };
  const ra = (rule) => (c, r, rand) => {
    if (r.ra <= 0) return decorrelated(c, rand);
    let v = r.ra;
    if (r.up) {
      if (rule === 'full') v = rand() * r.ra;
      if (rule === 'lower') v = r.ra + rand() * maxf(r.ra, p.base);
    }
    c.prev = v;
    return v;
  };
  const sgc = (c, r, rand) => {
    if (p.honor && r.ra > 0) return r.ra;
    let v = at(c.att - 1);
    if (p.width > 0) v *= 1 + p.width * (rand() - 0.5);
    return v;
  };
  switch (p.kind) {
    case 'fixed': return () => p.base;
    case 'exponential': return (c) => at(c.att);
    case 'full-jitter': return (c, r, rand) => rand() * at(c.att);
    case 'equal-jitter': return (c, r, rand) => { const d = at(c.att); return d / 2 + rand() * d / 2; };
    case 'width-jitter': return (c, r, rand) => at(c.att) * (1 + p.width * (2 * rand() - 1));
    case 'decorrelated': case 'ra-ignore': return (c, r, rand) => decorrelated(c, rand);
    case 'ra-exact': return ra('exact');
    case 'ra-full-jitter': return ra('full');
    case 'ra-lower-bound': return ra('lower');
    case 'article-client': return (c, r, rand) => {
      let w;
      if (r.ra > 0) { w = r.ra + rand() * maxf(r.ra, p.base); c.prev = w; } else w = decorrelated(c, rand);
      return minf(cap, w + installOffset(r.index) * p.base);
    };
    case 'grpc': return (c, r, rand) => at(c.att - 1) * (1 + p.width * (2 * rand() - 1));
    case 'api-core': return (c, r, rand) => rand() * at(c.att - 1);
    case 'aws-standard': {
      const maxN = p.cap === 0 ? 62 : Math.floor(Math.log2(p.cap / p.base));
      return (c, r, rand) => (c.att > maxN ? cap : rand() * p.base * 2 ** c.att);
    }
    case 'watchdog': case 'http-retry': return sgc;
  }
  throw new Error('unknown kind ' + p.kind);
}

const P = (kind, base, cap, mult = 0, width = 0, honor = false) => ({ kind, base, cap, mult, width, honor });
const cases = [
  [P('fixed', 5000, 0), [0]],
  [P('exponential', 1000, 60000, 2), [0]],
  [P('exponential', 1000, 0, 1.5), [0]],
  [P('full-jitter', 1000, 60000, 2), [0]],
  [P('equal-jitter', 1000, 60000, 2), [0]],
  [P('width-jitter', 1000, 60000, 2, 0.1), [0]],
  [P('width-jitter', 1000, 60000, 2, 0.25), [0]],
  [P('width-jitter', 1000, 60000, 2, 0.55), [0]],
  [P('decorrelated', 1000, 60000), [0]],
  [P('decorrelated', 700, 45000), [0]],
  [P('ra-exact', 1000, 60000), [0, 30000]],
  [P('ra-full-jitter', 1000, 60000), [0, 30000]],
  [P('ra-lower-bound', 1000, 60000), [0, 1000, 30000]],
  [P('ra-ignore', 1000, 60000), [30000]],
  [P('article-client', 1000, 60000), [0, 30000]],
  [P('grpc', 1000, 120000, 1.6, 0.2), [0]],
  [P('grpc', 500, 60000, 1.5, 0.5), [0]],
  [P('api-core', 1000, 60000, 2), [0]],
  [P('api-core', 25, 250, 2), [0]],
  [P('aws-standard', 1000, 20000), [0]],
  [P('watchdog', 1000, 0, 2), [0]],
  [P('watchdog', 2000, 120000, 1.5, 0.5), [0]],
  [P('http-retry', 500, 30000, 2, 0.2), [0]],
  [P('http-retry', 500, 30000, 2, 0.2, true), [0, 12000]],
];
const N = 48; // delays per line: enough for one in ten to differ many times over
for (const [p, ras] of cases) {
  for (const seed of [1, 42, 206]) {
    for (const ra of ras) {
      for (const up of [false, true]) {
        const d = delayer(p), rand = mulberry32(seed), c = { att: 0, prev: p.base };
        const out = [];
        for (let i = 0; i < N; i++) { c.att++; out.push(d(c, { ra, up, index: 0 }, rand)); }
        console.log(`${p.kind} ${p.base} ${p.cap} ${p.mult} ${p.width} ${p.honor} ${seed} ${ra} ${up}: ${out.join(' ')}`);
      }
    }
  }
}
