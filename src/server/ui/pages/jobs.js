// Jobs (R-UI-1): filters by user, queue and state, a search, sortable columns and pages, all
// done by the server (GET /v1/jobs?offset=&limit=&sort=&order=&search=...), so a page costs
// the same with 100 or 100,000 jobs. The filters live in the address (shareable links).
import {api, get} from '../api.js';
import {fill, errorBox, fmtDuration, fmtNumber, fmtTime, h, jobHref, jobLabel, stateBadge} from '../dom.js';

const STATES = ['PENDING', 'HELD', 'ADMITTING', 'RUNNING', 'DONE', 'EXIT', 'CANCELLED'];
const FIELDS = 'id,name,user,queue,state,reason,exit_code,cause,tasks,submit_time,start_time,' +
  'end_time,hosts,estimated_start,index,array,elements';
const COLUMNS = [
  {key: 'id', label: 'ID', sort: 'id'},
  {key: 'name', label: 'Name', sort: 'name'},
  {key: 'user', label: 'User', sort: 'user'},
  {key: 'queue', label: 'Queue', sort: 'queue'},
  {key: 'state', label: 'State', sort: 'state'},
  {key: 'why', label: 'Reason / exit'},
  {key: 'tasks', label: 'Tasks'},
  {key: 'submit_time', label: 'Submitted', sort: 'submit_time'},
  {key: 'start_time', label: 'Started', sort: 'start_time'},
  {key: 'hosts', label: 'Hosts'},
];
const DEFAULTS = {search: '', user: '', queue: '', state: '', host: '', sort: 'id', order: 'desc',
  offset: '0', limit: '50'};

function readQuery() {
  const p = new URLSearchParams(location.search);
  const q = {};
  for (const [k, v] of Object.entries(DEFAULTS)) q[k] = p.get(k) ?? v;
  return q;
}

function writeQuery(q) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== DEFAULTS[k] && v !== '') p.set(k, v);
  const text = p.toString();
  history.replaceState(null, '', `/ui/jobs${text ? `?${text}` : ''}`);
}

function apiPath(q) {
  const p = new URLSearchParams({offset: q.offset, limit: q.limit, sort: q.sort, order: q.order,
    fields: FIELDS, user: q.user || 'all'});
  for (const k of ['search', 'queue', 'state', 'host']) if (q[k]) p.set(k, q[k]);
  return `/v1/jobs?${p}`;
}

function why(job) {
  if (job.reason) {
    const est = typeof job.estimated_start === 'number' ?
      ` · starts ~${fmtDuration(job.estimated_start - Date.now() / 1000)}` : '';
    return h('span', {class: 'reason'}, job.reason, h('span', {class: 'muted'}, est));
  }
  if (job.exit_code !== null && job.exit_code !== undefined) {
    return `exit ${job.exit_code}${job.cause ? ` (${job.cause})` : ''}`;
  }
  return job.cause || '';
}

function cell(job, key) {
  switch (key) {
    case 'id': return job.array ?
      h('a', {href: jobHref(job)}, `${job.id}[${job.array}]`) :
      h('a', {href: jobHref(job)}, jobLabel(job));
    case 'state': return stateBadge(job.state);
    case 'why': return why(job);
    case 'submit_time': case 'start_time': return fmtTime(job[key]);
    case 'hosts': return (job.hosts || []).map((x) => (x.name ? `${x.name}:${x.slots}` : x)).join(' ');
    default: return job[key] ?? '';
  }
}

function filterForm(q, queues, apply) {
  const input = (name, label, attrs) => [h('label', {for: `f-${name}`}, label),
    h('input', {id: `f-${name}`, name, value: q[name], ...attrs})];
  const select = (name, label, options) => [h('label', {for: `f-${name}`}, label),
    h('select', {id: `f-${name}`, name}, options.map(([v, t]) =>
      h('option', {value: v, selected: q[name] === v}, t)))];
  const form = h('form', {class: 'filters', role: 'search', onsubmit: (e) => {
    e.preventDefault();
    const data = new FormData(form);
    apply({...q, search: data.get('search').trim(), user: data.get('user').trim(),
      queue: data.get('queue'), state: data.get('state'), host: data.get('host').trim(),
      offset: '0'});
  }, onchange: (e) => {
    if (e.target.tagName === 'SELECT') form.requestSubmit();
  }},
  input('search', 'Search', {type: 'search', placeholder: 'id, name, user, command'}),
  input('user', 'User', {placeholder: 'all'}),
  select('queue', 'Queue', [['', 'all'], ...queues.map((x) => [x.name, x.name])]),
  select('state', 'State', [['', 'all'], ['PENDING,HELD', 'waiting'],
    ['ADMITTING,RUNNING', 'active'], ['DONE,EXIT,CANCELLED', 'ended'],
    ...STATES.map((st) => [st, st])]),
  input('host', 'Host', {placeholder: 'any'}),
  h('button', {type: 'submit'}, 'Apply'));
  return form;
}

// Elements under their array (issue 47.5): on a page that lists an array's object (it stands
// for its elements still waiting), that array's elements on the page follow it, indented; the
// rest keep the server's order.
function grouped(jobs) {
  const arrays = new Set(jobs.filter((j) => j.array).map((j) => j.id));
  const under = new Map();
  for (const j of jobs) {
    if (j.index !== undefined && arrays.has(j.id)) {
      if (!under.has(j.id)) under.set(j.id, []);
      under.get(j.id).push({...j, underArray: true});
    }
  }
  const out = [];
  for (const j of jobs) {
    if (j.index !== undefined && arrays.has(j.id)) continue;
    out.push(j);
    if (j.array) out.push(...(under.get(j.id) || []));
  }
  return out;
}

function table(jobs, q, apply) {
  const head = COLUMNS.map((c) => {
    if (!c.sort) return h('th', {scope: 'col', class: `c-${c.key}`}, c.label);
    const active = q.sort === c.sort;
    const next = active && q.order === 'desc' ? 'asc' : 'desc';
    return h('th', {scope: 'col', class: `c-${c.key}`, 'aria-sort': active ? (q.order === 'desc' ? 'descending' : 'ascending') : 'none'},
        h('button', {type: 'button', class: 'sort', onclick: () => apply({...q, sort: c.sort, order: next, offset: '0'})},
            c.label, active ? (q.order === 'desc' ? ' ▼' : ' ▲') : ''));
  });
  const rows = jobs.length === 0 ?
    [h('tr', null, h('td', {colspan: COLUMNS.length, class: 'muted'}, 'No job matches.'))] :
    grouped(jobs).map((job) => h('tr', {'data-job': jobLabel(job),
      class: job.array ? 'array' : (job.index !== undefined && job.underArray ? 'element' : null)},
    COLUMNS.map((c) => h('td', {class: `c-${c.key}`}, cell(job, c.key)))));
  return h('div', {class: 'table-wrap'}, h('table', {class: 'grid-table jobs'},
      h('thead', null, h('tr', null, head)), h('tbody', null, rows)));
}

function pager(total, q, apply) {
  const offset = Number(q.offset);
  const limit = Number(q.limit);
  const last = Math.max(0, Math.floor((total - 1) / limit) * limit);
  const go = (at) => apply({...q, offset: String(Math.min(Math.max(0, at), last))});
  return h('nav', {class: 'pager', 'aria-label': 'Pages'},
      h('button', {type: 'button', onclick: () => go(0), disabled: offset === 0}, '« First'),
      h('button', {type: 'button', onclick: () => go(offset - limit), disabled: offset === 0}, '‹ Previous'),
      h('span', {class: 'page-info', 'aria-live': 'polite'}, total === 0 ? '0 jobs' :
        `${fmtNumber(offset + 1)}–${fmtNumber(Math.min(total, offset + limit))} of ${fmtNumber(total)} jobs`),
      h('button', {type: 'button', onclick: () => go(offset + limit), disabled: offset + limit >= total}, 'Next ›'),
      h('button', {type: 'button', onclick: () => go(last), disabled: offset >= last}, 'Last »'),
      h('label', {for: 'f-limit'}, 'Per page'),
      h('select', {id: 'f-limit', onchange: (e) => apply({...q, limit: e.target.value, offset: '0'})},
          ['25', '50', '100', '200'].map((n) => h('option', {value: n, selected: q.limit === n}, n))));
}

export async function mount(root) {
  document.title = 'Jobs · Sluice';
  let q = readQuery();
  const queues = await get('/v1/queues');
  const form = h('div');
  const results = h('div', {class: 'results'});
  root.append(h('h1', null, 'Jobs'), form, results);
  let seq = 0;
  const load = async () => {
    const mine = ++seq;
    try {
      const {data, total} = await api(apiPath(q));
      if (mine !== seq) return;
      fill(results, pager(total, q, apply), table(data, q, apply));
    } catch (err) {
      if (mine === seq) fill(results, errorBox(err));
    }
  };
  const apply = (next) => {
    q = next;
    writeQuery(q);
    fill(form, filterForm(q, queues, apply));
    return load();
  };
  fill(form, filterForm(q, queues, apply));
  await load();
  performance.mark('sluice:jobs-rendered');
  return {refresh: load};
}
