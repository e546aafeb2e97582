// Queues (R-UI-1): status, capacity (guaranteed / used / max of the cluster's slots), limits
// and the configured limits table; administrators can open / close / activate / inactivate.
import {get, post} from '../api.js';
import {fill, errorBox, fmtDuration, fmtNumber, h} from '../dom.js';
import {queueCapacity} from './overview.js';

function limitsText(q) {
  const parts = [];
  if (q.run_limit !== null && q.run_limit !== undefined) parts.push(`run limit ${q.run_limit} jobs`);
  if (q.slot_limit !== null && q.slot_limit !== undefined) parts.push(`slot limit ${q.slot_limit}`);
  if (q.user_limit_pct) parts.push(`user limit ${q.user_limit_pct}%`);
  if (q.host_group) parts.push(`hosts ${q.host_group}`);
  if (q.windows && q.windows.length) parts.push(`windows ${q.windows.join(', ')}`);
  if (q.submit_users) parts.push(`submit: ${q.submit_users.join(', ')}`);
  if (q.preemptive) parts.push('preemptive');
  if (q.preemptable) parts.push('preemptable');
  return parts.length ? parts.join(' · ') : 'none';
}

function queueCard(q, total, app, refresh, status) {
  const cap = queueCapacity(q, total);
  const act = async (verb) => {
    try {
      await post(`/v1/queues/${encodeURIComponent(q.name)}/${verb}`);
      status.textContent = `${q.name}: ${verb} done`;
      await refresh();
    } catch (err) {
      status.textContent = err.message;
    }
  };
  const admin = app.user && app.user.admin;
  return h('article', {class: 'queue', 'aria-labelledby': `q-${q.name}`},
      h('h2', {id: `q-${q.name}`}, q.name, ' ',
          h('span', {class: `badge ${q.open ? 'st-running' : 'st-exit'}`}, q.open ? 'open' : 'closed'), ' ',
          h('span', {class: `badge ${q.active ? 'st-running' : 'st-held'}`}, q.active ? 'active' : 'inactive')),
      h('div', {class: 'cap'}, cap.bar, h('span', {class: 'cap-text'},
          `${fmtNumber(q.used_slots)} used · ${cap.guaranteed ? `${fmtNumber(cap.guaranteed)} guaranteed (${q.capacity}%) · ` : ''}` +
          `max ${fmtNumber(cap.max)} (${q.max_capacity}%) of ${fmtNumber(total)} slots`)),
      h('dl', {class: 'fields compact'},
          h('dt', null, 'Jobs'), h('dd', null, h('a', {href: `/ui/jobs?queue=${encodeURIComponent(q.name)}&state=ADMITTING,RUNNING`}, `${fmtNumber(q.running)} running`),
              ' · ', h('a', {href: `/ui/jobs?queue=${encodeURIComponent(q.name)}&state=PENDING,HELD`}, `${fmtNumber(q.pending)} pending, ${fmtNumber(q.held)} held`)),
          h('dt', null, 'Policy'), h('dd', null, `${q.policy}, priority ${q.priority}` +
              (q.policy === 'bounded_backfill' ? `, max bypass ${q.max_bypass}, head wait ${fmtDuration(q.max_head_wait)}` : '')),
          h('dt', null, 'Limits'), h('dd', null, limitsText(q)),
          h('dt', null, 'On host loss'), h('dd', null, q.on_host_loss)),
      admin ? h('div', {class: 'actions'},
          h('button', {type: 'button', onclick: () => act(q.open ? 'close' : 'open')}, q.open ? 'Close' : 'Open'),
          h('button', {type: 'button', onclick: () => act(q.active ? 'inactivate' : 'activate')},
              q.active ? 'Inactivate' : 'Activate')) : null);
}

function limitsTable(limits) {
  if (!limits.length) return null;
  const scope = (sc) => (!sc ? 'all' : `${sc.per_each ? 'each of ' : ''}${sc.names.length ? sc.names.join(', ') : 'all'}`);
  return h('section', null, h('h2', null, 'Limits'), h('table', {class: 'grid-table'},
      h('thead', null, h('tr', null, ['Limit', 'Slots', 'Jobs', 'Resources', 'Users', 'Queues', 'Hosts', 'Projects']
          .map((t) => h('th', {scope: 'col'}, t)))),
      h('tbody', null, limits.map((l) => h('tr', null, h('td', null, l.name), h('td', null, l.slots ?? '-'),
          h('td', null, l.jobs ?? '-'), h('td', null, Object.entries(l.resources || {}).map(([k, v]) => `${k}=${v}`).join(' ') || '-'),
          h('td', null, scope(l.users)), h('td', null, scope(l.queues)), h('td', null, scope(l.hosts)),
          h('td', null, scope(l.projects)))))));
}

export async function mount(root, params, app) {
  document.title = 'Queues · Sluice';
  const body = h('div');
  const status = h('p', {class: 'action-status', role: 'status', 'aria-live': 'polite'});
  root.append(h('h1', null, 'Queues'), status, body);
  const refresh = async () => {
    try {
      const [queues, stats, limits] = await Promise.all([get('/v1/queues'), get('/v1/stats?points=1'),
        get('/v1/limits')]);
      fill(body, h('div', {class: 'queues'}, queues.map((q) => queueCard(q, stats.now.slots, app, refresh, status))),
          h('p', {class: 'muted legend-line'}, 'Bar: filled = used; band = guaranteed; line = max.'),
          limitsTable(limits));
    } catch (err) {
      fill(body, errorBox(err));
    }
  };
  await refresh();
  return {refresh};
}
