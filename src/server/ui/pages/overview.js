// Overview (R-UI-1): utilization now and over the kept samples (GET /v1/stats), jobs by
// state, pending jobs by reason, each user's jobs and slots now, and each queue's guaranteed /
// used / max capacity. Every job number comes from one server count (docs/api.md), so the
// cards, the tables and the queue rows agree.
import {get} from '../api.js';
import {capacityBar, lineChart} from '../chart.js';
import {fill, fmtNumber, h, stateBadge} from '../dom.js';

const STATES = ['PENDING', 'HELD', 'ADMITTING', 'RUNNING', 'DONE', 'EXIT', 'CANCELLED'];

function card(label, value, detail) {
  return h('div', {class: 'card'}, h('div', {class: 'card-label'}, label),
      h('div', {class: 'card-value'}, value), detail ? h('div', {class: 'muted'}, detail) : null);
}

function summary(now) {
  const pct = now.slots > 0 ? Math.round((100 * now.used_slots) / now.slots) : 0;
  return h('section', {class: 'cards', 'aria-label': 'Now'},
      card('Utilization', `${pct}%`, `${fmtNumber(now.used_slots)} of ${fmtNumber(now.slots)} slots`),
      card('Running', fmtNumber(now.running), now.admitting ? `${fmtNumber(now.admitting)} of them starting` : null),
      card('Pending', fmtNumber(now.pending), now.held ? `${fmtNumber(now.held)} held` : null),
      card('Hosts', `${now.hosts_ok} / ${now.hosts}`, 'accepting work'));
}

function charts(stats) {
  const pts = (key) => stats.samples.map((x) => [x.time, x[key]]);
  return h('section', {class: 'charts'},
      lineChart({title: 'Slots', series: [
        {name: 'used', cls: 's-used', points: pts('used_slots')},
        {name: 'available', cls: 's-total', points: pts('slots')},
      ]}),
      lineChart({title: 'Jobs', series: [
        {name: 'running', cls: 's-running', points: pts('running')},
        {name: 'pending', cls: 's-pending', points: pts('pending')},
      ]}));
}

function countsTable(caption, rows, link) {
  const body = rows.length === 0 ? [h('tr', null, h('td', {colspan: 2, class: 'muted'}, 'none'))] :
    rows.map(([key, n, label]) => h('tr', null,
        h('td', null, link ? h('a', {href: link(key)}, label) : label),
        h('td', {class: 'num'}, fmtNumber(n))));
  return h('table', {class: 'counts'}, h('caption', null, caption), h('tbody', null, body));
}

function jobCounts(now) {
  const states = STATES.filter((st) => now.jobs_by_state[st])
      .concat(Object.keys(now.jobs_by_state).filter((st) => !STATES.includes(st)));
  const reasons = Object.entries(now.pending_by_reason).sort((a, b) => b[1] - a[1]);
  return h('section', {class: 'two'},
      countsTable('Jobs by state', states.map((st) => [st, now.jobs_by_state[st], stateBadge(st)]),
          (st) => `/ui/jobs?state=${st}`),
      countsTable('Pending jobs by reason', reasons.map(([r, n]) => [r, n, r]), null));
}

// Each user with a live job: running, slots held, pending and held (ended jobs: History).
function usersTable(users) {
  const names = Object.keys(users || {}).sort((a, b) =>
    users[b].slots - users[a].slots || users[b].pending - users[a].pending || a.localeCompare(b));
  const head = ['User', 'Running', 'Slots in use', 'Pending', 'Held'].map((t) => h('th', {scope: 'col'}, t));
  const body = names.length === 0 ?
    [h('tr', null, h('td', {colspan: 5, class: 'muted'}, 'No user has a job running or waiting.'))] :
    names.map((name) => {
      const u = users[name];
      return h('tr', {'data-user': name},
          h('td', null, h('a', {href: `/ui/jobs?user=${encodeURIComponent(name)}`}, name)),
          h('td', {class: 'num'}, fmtNumber(u.running)), h('td', {class: 'num'}, fmtNumber(u.slots)),
          h('td', {class: 'num'}, fmtNumber(u.pending)), h('td', {class: 'num'}, fmtNumber(u.held)));
    });
  return h('section', null, h('h2', null, 'Users now'), h('div', {class: 'table-wrap'},
      h('table', {class: 'grid-table users-now'}, h('thead', null, h('tr', null, head)),
          h('tbody', null, body))));
}

// A queue's capacity row: slots are the percentages of the cluster's available slots.
export function queueCapacity(q, totalSlots) {
  const guaranteed = q.capacity === null || q.capacity === undefined ? 0 :
    Math.floor((q.capacity * totalSlots) / 100);
  const max = Math.floor(((q.max_capacity ?? 100) * totalSlots) / 100);
  const label = `${q.name}: ${q.used_slots} slots used` +
    (guaranteed ? `, ${guaranteed} guaranteed` : '') + `, max ${max} of ${totalSlots}`;
  return {guaranteed, max, label,
    bar: capacityBar({used: q.used_slots, guaranteed, max, total: totalSlots, label})};
}

// Its running and pending jobs from the same sample as the cards (`now`).
function queueTable(queues, now) {
  const totalSlots = now.slots;
  return h('section', null, h('h2', null, 'Queues'), h('table', {class: 'grid-table'},
      h('thead', null, h('tr', null, ['Queue', 'Status', 'Running', 'Pending', 'Capacity (slots)']
          .map((t) => h('th', {scope: 'col'}, t)))),
      h('tbody', null, queues.map((q) => {
        const cap = queueCapacity(q, totalSlots);
        const counted = (now.queues || {})[q.name] || q;
        return h('tr', null,
            h('td', null, h('a', {href: `/ui/jobs?queue=${encodeURIComponent(q.name)}`}, q.name)),
            h('td', null, `${q.open ? 'open' : 'closed'}, ${q.active ? 'active' : 'inactive'}`),
            h('td', {class: 'num'}, fmtNumber(counted.running)),
            h('td', {class: 'num'}, fmtNumber(counted.pending)),
            h('td', {class: 'cap'}, cap.bar, h('span', {class: 'cap-text'}, cap.label.replace(`${q.name}: `, ''))));
      }))), h('p', {class: 'muted legend-line'}, 'Bar: filled = used; band = guaranteed; line = max.'));
}

export async function mount(root) {
  document.title = 'Overview · Sluice';
  const body = h('div', {class: 'overview'});
  root.append(h('h1', null, 'Overview'), body);
  const refresh = async () => {
    const [stats, queues] = await Promise.all([get('/v1/stats?points=360'), get('/v1/queues')]);
    fill(body, summary(stats.now), charts(stats), jobCounts(stats.now), usersTable(stats.now.users),
        queueTable(queues, stats.now));
  };
  await refresh();
  const timer = setInterval(() => refresh().catch(() => {}), 10000);
  return {refresh, dispose: () => clearInterval(timer)};
}
