// How the page writes numbers, durations and times. Pure functions: a missing value (null or
// undefined, as the API sends "no result yet") is a dash.
export const DASH = '—';

function missing(v) {
  return v === null || v === undefined;
}

// A fixed number of decimals (GFLOP/s, rates).
export function num(v, digits = 2) {
  return missing(v) ? DASH : Number(v).toFixed(digits);
}

// Milliseconds (or microseconds) with 4 significant digits: kernels run from nanoseconds to seconds.
export function ms(v) {
  return missing(v) ? DASH : Number(v).toPrecision(4);
}

// A count with thousands separators.
export function int(v) {
  return missing(v) ? DASH : Number(v).toLocaleString('en-US');
}

// A FLOP count with its SI prefix ("2.31 G"); a dash for none.
export function flops(v) {
  if (!v) return DASH;
  const units = [
    ['T', 1e12],
    ['G', 1e9],
    ['M', 1e6],
    ['K', 1e3],
  ];
  for (const [unit, scale] of units) if (v >= scale) return (v / scale).toFixed(2) + ' ' + unit;
  return String(v);
}

// Seconds as the page's ETA and uptime read: "45 s", "12 min", "2.5 h".
export function duration(s) {
  if (missing(s)) return DASH;
  if (s < 90) return Math.round(s) + ' s';
  if (s < 5400) return Math.round(s / 60) + ' min';
  return (s / 3600).toFixed(1) + ' h';
}

// A time of day from milliseconds since the epoch, in the browser's locale.
export function clock(epochMs) {
  return epochMs ? new Date(epochMs).toLocaleTimeString() : DASH;
}
