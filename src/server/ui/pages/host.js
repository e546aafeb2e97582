// Host detail (issue 47.9): its state and why, slots and each consumable (configured and held
// by its jobs, memory in MB), its load and available memory as its agent reports them,
// attributes and tags, its agent, its reservations (R-RSV-1), its GPUs (R-GPU-4), and the
// jobs running on it.
import {get} from '../api.js';
import {errorBox, fieldList, fill, fmtNumber, fmtTime, h, jobHref, jobLabel, stateBadge} from '../dom.js';
import {fmtWindow} from '../reservations.js';

function usage(used, total, unit) {
  const pct = total > 0 ? ` (${Math.round((100 * used) / total)} %)` : '';
  return `${fmtNumber(used)} of ${fmtNumber(total)}${unit ? ` ${unit}` : ''} used${pct}`;
}

function fields(host) {
  const rows = [['State', host.state + (host.reason ? ` — ${host.reason}` : '')],
    ['Slots', usage(host.used_slots, host.slots, '')], ['Running jobs', host.running_jobs]];
  for (const [name, total] of Object.entries(host.resources || {})) {
    const used = (host.used_resources || {})[name] ?? 0;
    rows.push([name === 'mem' ? 'Memory' : `Resource ${name}`, usage(used, total, name === 'mem' ? 'MB' : '')]);
  }
  const load = host.load;
  rows.push(['Load (1, 5, 15 min)', load ? [load.r1m, load.r5m, load.r15m].map((x) => x.toFixed(2)).join(', ') :
    'not reported yet'],
  ['Memory available', load && typeof load.mem_available_mb === 'number' ?
    `${fmtNumber(load.mem_available_mb)} MB` : '-']);
  for (const [name, value] of Object.entries(host.attributes || {})) rows.push([`Attribute ${name}`, value]);
  rows.push(['Tags', (host.tags || []).join(', ') || '-']);
  if (Array.isArray(host.reservations)) {
    rows.push(['Reservations', host.reservations.map((r) => `${r.name} ${fmtWindow(r.begin, r.end)}`)
        .join('; ') || '-']);
  }
  const agent = host.agent || {};
  rows.push(['Agent', agent.connected ? 'connected' : 'not connected'],
      ['Last heartbeat', fmtTime(agent.last_heartbeat)]);
  return fieldList(rows);
}

// The slots job `j` holds on host `name`.
function slotsOn(j, name) {
  const here = (j.hosts || []).find((x) => x.name === name);
  return here ? String(here.slots) : '';
}

// Its GPUs (R-GPU-4): index, model, memory, NUMA node, NVLink peers, held or free.
function gpusTable(gpus) {
  const head = ['GPU', 'Model', 'Memory', 'NUMA node', 'NVLink to', 'In use'].map((t) => h('th', {scope: 'col'}, t));
  const row = (g) => h('tr', {'data-gpu': String(g.index)}, h('td', null, String(g.index)),
      h('td', null, g.model || '-'), h('td', null, g.memory_mb ? `${fmtNumber(g.memory_mb)} MB` : '-'),
      h('td', null, g.numa ?? '-'), h('td', null, (g.nvlink || []).join(', ') || '-'),
      h('td', null, g.in_use ? 'yes' : 'no'));
  return h('div', {class: 'table-wrap'}, h('table', {class: 'grid-table host-gpus'},
      h('thead', null, h('tr', null, head)), h('tbody', null, gpus.map(row))));
}

function jobsTable(jobs, name) {
  if (jobs.length === 0) return h('p', {class: 'muted'}, 'None.');
  const head = ['Job', 'Name', 'User', 'Started', 'Slots here'].map((t) => h('th', {scope: 'col'}, t));
  const row = (j) => h('tr', {'data-job': jobLabel(j)},
      h('td', null, h('a', {href: jobHref(j)}, jobLabel(j))), h('td', null, j.name || ''),
      h('td', null, j.user), h('td', null, fmtTime(j.start_time)), h('td', null, slotsOn(j, name)));
  return h('div', {class: 'table-wrap'}, h('table', {class: 'grid-table host-jobs'},
      h('thead', null, h('tr', null, head)), h('tbody', null, jobs.map(row))));
}

export async function mount(root, params) {
  document.title = `Host ${params.name} · Sluice`;
  const body = h('div', {class: 'host'});
  root.append(h('p', {class: 'crumbs'}, h('a', {href: '/ui/hosts'}, '← Hosts')), body);
  const refresh = async () => {
    let host;
    let jobs;
    try {
      const hosts = await get('/v1/hosts');
      host = hosts.find((x) => x.name === params.name);
      jobs = host ? await get(`/v1/jobs?host=${encodeURIComponent(params.name)}&state=ADMITTING,RUNNING` +
        '&offset=0&limit=200&sort=start_time&user=all&fields=id,index,name,user,state,start_time,hosts') : [];
    } catch (err) {
      fill(body, h('h1', null, `Host ${params.name}`), errorBox(err));
      return;
    }
    if (!host) {
      fill(body, h('h1', null, `Host ${params.name}`), h('p', {class: 'error'}, 'No such host.'));
      return;
    }
    const gpus = host.gpus || [];
    fill(body, h('h1', null, `Host ${host.name} `, stateBadge(host.state)), fields(host),
        ...(gpus.length ? [h('h2', null, `GPUs (${gpus.length})`), gpusTable(gpus)] : []),
        h('h2', null, `Running jobs (${jobs.length})`), jobsTable(jobs, host.name));
  };
  await refresh();
  const timer = setInterval(() => refresh().catch(() => {}), 10000);
  return {refresh, dispose: () => clearInterval(timer)};
}
