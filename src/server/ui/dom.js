// Small DOM helpers: elements built with textContent only (never innerHTML, so no text from
// the API is ever parsed as markup), SVG elements, and the formats every page shares.

const SVG_NS = 'http://www.w3.org/2000/svg';

function setAttributes(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key === 'class') {
      el.setAttribute('class', value);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
}

function appendChildren(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

// h('a', {href: '/ui/jobs', class: 'x'}, 'text', child, [more]) -> HTMLElement
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttributes(el, attrs);
  appendChildren(el, children);
  return el;
}

// The same for SVG elements.
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttributes(el, attrs);
  appendChildren(el, children);
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

// Replaces the children of `el` (null, undefined and false children are skipped).
export function fill(el, ...children) {
  clear(el);
  appendChildren(el, children);
  return el;
}

const pad = (n) => String(n).padStart(2, '0');

// Unix seconds -> "2026-12-01 20:17:07" (local time); "-" for none.
export function fmtTime(unix) {
  if (unix === null || unix === undefined || unix === 0) return '-';
  const d = new Date(unix * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
      `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// Unix seconds -> "20:17", or "20:17:07" with `seconds`.
export function fmtClock(unix, seconds = false) {
  const d = new Date(unix * 1000);
  const text = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return seconds ? `${text}:${pad(d.getSeconds())}` : text;
}

// Seconds -> "3d 4h", "2h 05m", "4m 10s", "12s".
export function fmtDuration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '-';
  const t = Math.max(0, Math.round(seconds));
  if (t >= 86400) return `${Math.floor(t / 86400)}d ${Math.floor((t % 86400) / 3600)}h`;
  if (t >= 3600) return `${Math.floor(t / 3600)}h ${pad(Math.floor((t % 3600) / 60))}m`;
  if (t >= 60) return `${Math.floor(t / 60)}m ${pad(t % 60)}s`;
  return `${t}s`;
}

export function fmtNumber(n) {
  return n === null || n === undefined ? '-' : Number(n).toLocaleString('en-US');
}

// The core writes times in reason lines as `t=<unix seconds>`: show them as clock times.
export function localTimes(text) {
  return String(text).replace(/t=(\d{9,})/g, (_, t) => fmtTime(Number(t)));
}

// The job's printable id: "12" or "12[3]" for an array element.
// A job's page: /ui/jobs/ID, or /ui/jobs/ID[INDEX] for an array element.
export function jobHref(job) {
  return `/ui/jobs/${jobLabel(job)}`;
}

export function jobLabel(job) {
  return job.index === undefined || job.index === null ? String(job.id) : `${job.id}[${job.index}]`;
}

export function stateBadge(state) {
  return h('span', {class: `badge st-${String(state || '').toLowerCase()}`}, state || '-');
}

export function errorBox(err) {
  return h('p', {class: 'error', role: 'alert'}, err && err.message ? err.message : String(err));
}

// A labelled list of [label, value] rows (value: text or node); rows with undefined skipped.
export function fieldList(rows) {
  const dl = h('dl', {class: 'fields'});
  for (const [label, value] of rows) {
    if (value === undefined) continue;
    dl.append(h('dt', null, label), h('dd', null, value === null || value === '' ? '-' : value));
  }
  return dl;
}

// Field names in words (issue 47.9): the job's and its admission record's members as
// `sluice jobs -l` names them; a member without an entry reads as its words ("queued_time"
// would be "Queued time"), never as the API's key.
const FIELD_WORDS = {
  cwd: 'Working directory', output: 'Output file', error: 'Error file', exclusive: 'Whole hosts',
  priority: 'Priority', dispatch_attempts: 'Dispatch attempts', requeues: 'Times requeued',
  queued_time: 'Pending since', script_bytes: 'Script size (bytes)', estimated_from: 'Estimated from',
  account: 'Runs as', array: 'Array indexes', elements: 'Elements by state', index: 'Array index',
  policy: 'Queue policy', seq: 'Place in queue', pending_age: 'Waiting for', request: 'Request',
  classification: 'Classification', bypass_count: 'Times bypassed', max_bypass: 'Bypass limit',
  first_blocked: 'First blocked', max_head_wait: 'Head wait limit', gate: 'Starvation gate',
  gate_since: 'Gate since', gate_active: 'Gate active', requested_slots: 'Slots asked',
  eligible_slots: 'Slots eligible', phase: 'Admission phase', epoch: 'Controller epoch',
  umask: 'File mode mask',
};

export function fieldWords(key) {
  if (Object.prototype.hasOwnProperty.call(FIELD_WORDS, key)) return FIELD_WORDS[key];
  const words = String(key).replace(/_/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

// A member's value as text: times as local times, lists and objects as their members.
export function fieldText(key, value) {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number' && /(_time|_blocked|_since)$/.test(key) && value > 1e8) return fmtTime(value);
  if (Array.isArray(value)) return value.map((x) => fieldText('', x)).join(', ');
  if (typeof value === 'object') {
    return Object.entries(value).map(([k, v]) => `${fieldWords(k).toLowerCase()} ${fieldText(k, v)}`).join(', ');
  }
  return String(value);
}
