// Advance reservations on the dashboard (R-RSV-1): a host's windows on its tile, and the table
// of GET /v1/reservations under the hosts. Times in local time, as every page shows them.
import {fmtTime, h} from './dom.js';

// "2026-12-06 15:00 – 17:00" (the end's date only when it differs); "… – open" without an end.
export function fmtWindow(begin, end) {
  const from = fmtTime(begin).slice(0, 16);
  if (end === null || end === undefined) return `${from} – open`;
  const to = fmtTime(end).slice(0, 16);
  return `${from} – ${to.slice(0, 10) === from.slice(0, 10) ? to.slice(11) : to}`;
}

// A host's current and next windows (GET /v1/hosts' `reservations`), one badge each.
export function hostReservations(host) {
  const list = Array.isArray(host.reservations) ? host.reservations : [];
  if (list.length === 0) return null;
  return h('div', {class: 'tile-rsv'}, list.map((r) =>
    h('span', {class: 'badge rsv', 'data-rsv': r.name, title: `Reserved: ${r.name}`},
        `${r.name} ${fmtWindow(r.begin, r.end)}`)));
}

// The window a reservation is in, or its next one; null when none is left.
function nextWindow(rsv, now) {
  for (const w of Array.isArray(rsv.windows) ? rsv.windows : []) {
    if (Array.isArray(w) && (w[1] === null || w[1] > now)) return w;
  }
  return null;
}

function where(rsv) {
  if (Array.isArray(rsv.hosts) && rsv.hosts.length > 0) return rsv.hosts.join(', ');
  return rsv.slots ? `${rsv.slots} slots${rsv.request ? ` [${rsv.request}]` : ''}` : '-';
}

function flags(rsv) {
  const out = [];
  if (rsv.maint) out.push('maintenance');
  if (rsv.ignore_jobs) out.push('ignore jobs');
  if (rsv.recur) out.push(`every ${rsv.recur.cron} (${rsv.recur.tz})`);
  if (rsv.overrun > 0) out.push(`overrun ${Math.round(rsv.overrun / 60)} min`);
  return out.join(', ') || '-';
}

// The reservations table; `list` is GET /v1/reservations' `reservations`.
export function reservationsTable(list) {
  if (list.length === 0) return h('p', {class: 'muted'}, 'No reservations.');
  const now = Date.now() / 1000;
  const head = ['Name', 'State', 'Where', 'Window', 'Users', 'Flags'].map((t) => h('th', {scope: 'col'}, t));
  const row = (r) => {
    const w = nextWindow(r, now);
    const users = [...(r.users || []), ...(r.groups || []).map((g) => `${g}/`)].join(', ');
    return h('tr', {'data-rsv': r.name}, h('td', null, r.name), h('td', null, r.state || '-'),
        h('td', null, where(r)), h('td', null, w ? fmtWindow(w[0], w[1]) : '-'),
        h('td', null, users || '-'), h('td', null, flags(r)));
  };
  return h('div', {class: 'table-wrap'}, h('table', {class: 'grid-table reservations'},
      h('thead', null, h('tr', null, head)), h('tbody', null, list.map(row))));
}
