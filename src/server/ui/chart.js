// SVG charts drawn from data, no library: a time-series line chart and a capacity bar.
import {fmtClock, fmtNumber, h, s} from './dom.js';

// A step of 1, 2 or 5 times a power of ten that splits `max` into at most 4 bands.
function niceStep(max) {
  const raw = max / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return Math.max(1, m * power);
  return Math.max(1, 10 * power);
}

// A line chart of `series` ([{name, cls, points: [[unixSeconds, value], ...]}]) over time.
// The SVG scales to its container's width (viewBox); a legend and a text summary follow it.
export function lineChart({title, series, yMax}) {
  const width = 640;
  const height = 200;
  const left = 44;
  const right = 10;
  const top = 10;
  const bottom = 24;
  const all = series.flatMap((x) => x.points);
  const figure = h('figure', {class: 'chart'}, h('figcaption', null, title));
  if (all.length < 1) {
    figure.append(h('p', {class: 'muted'}, 'No samples yet: the server samples every few seconds.'));
    return figure;
  }
  const t0 = Math.min(...all.map((p) => p[0]));
  const t1 = Math.max(t0 + 60, ...all.map((p) => p[0]));
  const step = niceStep(Math.max(1, yMax ?? 0, ...all.map((p) => p[1])));
  const vmax = step * Math.ceil(Math.max(1, yMax ?? 0, ...all.map((p) => p[1])) / step);
  const x = (t) => left + ((t - t0) / (t1 - t0)) * (width - left - right);
  const y = (v) => top + (1 - v / vmax) * (height - top - bottom);
  const svg = s('svg', {viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title,
    class: 'chart-svg'});
  for (let v = 0; v <= vmax; v += step) {
    svg.append(s('line', {x1: left, x2: width - right, y1: y(v), y2: y(v), class: 'grid'}),
        s('text', {x: left - 6, y: y(v) + 4, class: 'axis', 'text-anchor': 'end'},
            fmtNumber(Math.round(v))));
  }
  for (let i = 0; i <= 4; i++) {
    const t = t0 + ((t1 - t0) * i) / 4;
    svg.append(s('text', {x: x(t), y: height - 6, class: 'axis',
      'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle'}, fmtClock(t, t1 - t0 < 600)));
  }
  for (const line of series) {
    if (line.points.length === 0) continue;
    const d = line.points.map((p, i) => `${i ? 'L' : 'M'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`);
    if (line.points.length === 1) d.push(`L${(x(line.points[0][0]) + 2).toFixed(1)},${y(line.points[0][1]).toFixed(1)}`);
    svg.append(s('path', {d: d.join(''), class: `series ${line.cls}`}, s('title', null, line.name)));
  }
  const legend = h('ul', {class: 'legend'}, series.map((line) => {
    const last = line.points.length ? line.points[line.points.length - 1][1] : null;
    return h('li', null, h('span', {class: `swatch ${line.cls}`}), `${line.name}: ${fmtNumber(last)}`);
  }));
  figure.append(h('div', {class: 'chart-box'}, svg), legend);
  return figure;
}

// A horizontal bar of a queue's slots: used (filled), guaranteed (marked band), max (line),
// all against the cluster's slots.
export function capacityBar({used, guaranteed, max, total, label}) {
  const width = 300;
  const height = 22;
  const scale = (v) => (total > 0 ? Math.min(width, (v / total) * width) : 0);
  const svg = s('svg', {viewBox: `0 0 ${width} ${height}`, class: 'capbar', role: 'img',
    'aria-label': label, preserveAspectRatio: 'none'},
  s('rect', {x: 0, y: 0, width, height, class: 'cap-track'}),
  guaranteed > 0 ? s('rect', {x: 0, y: 0, width: scale(guaranteed), height, class: 'cap-guaranteed'}) : null,
  s('rect', {x: 0, y: 5, width: scale(used), height: height - 10,
    class: used > guaranteed && guaranteed > 0 ? 'cap-used over' : 'cap-used'}),
  max < total ? s('line', {x1: scale(max), x2: scale(max), y1: 0, y2: height, class: 'cap-max'}) : null,
  s('title', null, label));
  return svg;
}

// A small stacked bar of counts ([{label, value, cls}]) with a legend.
export function countBar(parts) {
  const total = parts.reduce((a, p) => a + p.value, 0);
  const width = 300;
  let at = 0;
  const svg = s('svg', {viewBox: `0 0 ${width} 14`, class: 'countbar', role: 'img',
    'aria-label': parts.map((p) => `${p.label} ${p.value}`).join(', '), preserveAspectRatio: 'none'});
  for (const p of parts) {
    if (!p.value) continue;
    const w = total ? (p.value / total) * width : 0;
    svg.append(s('rect', {x: at, y: 0, width: w, height: 14, class: p.cls}, s('title', null, `${p.label}: ${p.value}`)));
    at += w;
  }
  return svg;
}
