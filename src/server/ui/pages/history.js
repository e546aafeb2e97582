// History (issue 47.9): ended jobs from the store (GET /v1/history, newest end first, a page at
// a time by its cursor) with the user and state filters in the address, and the accounting
// summary per user (GET /v1/history/summary: jobs, slot-hours, cpu-hours, average wait).
import {get} from '../api.js';
import {errorBox, fill, fmtDuration, fmtNumber, fmtTime, h, jobHref, jobLabel, stateBadge} from '../dom.js';

function readQuery() {
  const p = new URLSearchParams(location.search);
  return {user: p.get('user') || '', state: p.get('state') || ''};
}

function filters(q, apply) {
  const form = h('form', {class: 'filters', role: 'search', onsubmit: (e) => {
    e.preventDefault();
    const data = new FormData(form);
    apply({user: data.get('user').trim(), state: data.get('state')});
  }},
  h('label', {for: 'hf-user'}, 'User'), h('input', {id: 'hf-user', name: 'user', value: q.user, placeholder: 'all'}),
  h('label', {for: 'hf-state'}, 'State'),
  h('select', {id: 'hf-state', name: 'state'}, [['', 'all'], ['DONE', 'DONE'], ['EXIT', 'EXIT'],
    ['CANCELLED', 'CANCELLED']].map(([v, t]) => h('option', {value: v, selected: q.state === v}, t))),
  h('button', {type: 'submit'}, 'Apply'));
  return form;
}

function summaryTable(summary) {
  const users = summary.users || [];
  return h('section', {class: 'usage'}, h('h2', null, 'Usage by user'),
      users.length === 0 ? h('p', {class: 'muted'}, 'No ended job yet.') :
        h('div', {class: 'table-wrap'}, h('table', {class: 'grid-table usage'},
            h('thead', null, h('tr', null, ['User', 'Jobs', 'Slot-hours', 'CPU-hours', 'Average wait']
                .map((t) => h('th', {scope: 'col'}, t)))),
            h('tbody', null, users.map((u) => h('tr', {'data-user': u.user},
                h('td', null, u.user), h('td', null, fmtNumber(u.jobs)),
                h('td', null, u.slot_hours.toFixed(2)),
                h('td', null, typeof u.cpu_hours === 'number' ? u.cpu_hours.toFixed(2) : '-'),
                h('td', null, fmtDuration(u.average_wait_seconds))))))));
}

function rows(jobs) {
  return jobs.map((j) => h('tr', {'data-job': jobLabel(j)},
      h('td', null, h('a', {href: jobHref(j)}, jobLabel(j))), h('td', null, j.name || ''),
      h('td', null, j.user), h('td', null, j.queue), h('td', null, stateBadge(j.state)),
      h('td', null, j.exit_code === null ? '' : String(j.exit_code)), h('td', null, j.cause || ''),
      h('td', null, fmtTime(j.end_time)), h('td', null, fmtDuration(j.wait_seconds)),
      h('td', null, fmtDuration(j.run_seconds)), h('td', null, String(j.slots))));
}

export async function mount(root) {
  document.title = 'History · Sluice';
  let q = readQuery();
  const form = h('div');
  const usage = h('div');
  const list = h('div', {class: 'results'});
  root.append(h('h1', null, 'History'), form, usage, list);
  const params = () => {
    const p = new URLSearchParams();
    if (q.user) p.set('user', q.user);
    if (q.state) p.set('state', q.state);
    return p;
  };
  const load = async () => {
    try {
      const [page, summary] = await Promise.all([get(`/v1/history?limit=50&${params()}`),
        get(`/v1/history/summary?${params()}`)]);
      fill(usage, summaryTable(summary));
      const body = h('tbody', null, rows(page.jobs));
      let cursor = page.next_cursor;
      const more = h('button', {type: 'button', hidden: !cursor, onclick: async () => {
        const next = await get(`/v1/history?limit=50&cursor=${encodeURIComponent(cursor)}&${params()}`);
        body.append(...rows(next.jobs));
        cursor = next.next_cursor;
        more.hidden = !cursor;
      }}, 'More');
      fill(list, h('h2', null, 'Ended jobs (newest first)'), h('div', {class: 'table-wrap'},
          h('table', {class: 'grid-table history'}, h('thead', null, h('tr', null,
              ['Job', 'Name', 'User', 'Queue', 'State', 'Exit', 'Cause', 'Ended', 'Waited', 'Ran', 'Slots']
                  .map((t) => h('th', {scope: 'col'}, t)))), body)), more);
    } catch (err) {
      fill(list, errorBox(err));
    }
  };
  const apply = (next) => {
    q = next;
    const text = params().toString();
    history.replaceState(null, '', `/ui/history${text ? `?${text}` : ''}`);
    fill(form, filters(q, apply));
    return load();
  };
  fill(form, filters(q, apply));
  await load();
  return {refresh: load};
}
