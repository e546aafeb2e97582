// Hosts (R-UI-1): a grid of tiles coloured by state, each with its load (used / slots), its
// advance reservations and a link to its jobs; administrators can open and close a host. Below
// the tiles, the reservations (R-RSV-1), asked for only of a server whose hosts carry
// `reservations` (an older one has no /v1/reservations).
import {get, post} from '../api.js';
import {fill, errorBox, fmtNumber, h} from '../dom.js';
import {hostReservations, reservationsTable} from '../reservations.js';

function loadClass(host) {
  if (host.state !== 'ok') return '';
  const f = host.slots > 0 ? host.used_slots / host.slots : 0;
  return f >= 1 ? 'load-full' : f >= 0.5 ? 'load-high' : f > 0 ? 'load-some' : 'load-idle';
}

function tile(host, app, refresh, status) {
  const pct = host.slots > 0 ? Math.round((100 * host.used_slots) / host.slots) : 0;
  const agent = host.agent && host.agent.connected ? 'agent connected' : 'no agent';
  const admin = app.user && app.user.admin;
  const act = async (verb) => {
    try {
      await post(`/v1/hosts/${encodeURIComponent(host.name)}/${verb}`);
      status.textContent = `${host.name}: ${verb} done`;
      await refresh();
    } catch (err) {
      status.textContent = err.message;
    }
  };
  return h('li', {class: `tile hs-${host.state} ${loadClass(host)}`, id: `host-${host.name}`},
      h('div', {class: 'tile-head'}, h('a', {href: `/ui/hosts/${encodeURIComponent(host.name)}`},
          h('strong', null, host.name)), h('span', {class: 'badge'}, host.state)),
      h('div', {class: 'meter', role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': host.slots,
        'aria-valuenow': host.used_slots, 'aria-label': `${host.name} slots used`},
      h('div', {class: 'meter-fill', style: null, 'data-pct': pct})),
      h('div', {class: 'muted'}, `${host.used_slots} / ${host.slots} slots · ${host.running_jobs} jobs`),
      h('div', {class: 'muted'}, agent),
      hostReservations(host),
      h('div', {class: 'tile-links'},
          h('a', {href: `/ui/jobs?host=${encodeURIComponent(host.name)}&state=ADMITTING,RUNNING`}, 'Jobs'),
          admin && host.state === 'ok' ? h('button', {type: 'button', onclick: () => act('close')}, 'Close') : null,
          admin && host.state === 'closed' ? h('button', {type: 'button', onclick: () => act('open')}, 'Open') : null));
}

// CSP forbids inline styles: meter widths are set through the CSSOM after rendering.
function sizeMeters(root) {
  for (const fill of root.querySelectorAll('.meter-fill')) fill.style.width = `${fill.dataset.pct}%`;
}

export async function mount(root, params, app) {
  document.title = 'Hosts · Sluice';
  const body = h('div');
  const status = h('p', {class: 'action-status', role: 'status', 'aria-live': 'polite'});
  root.append(h('h1', null, 'Hosts'), status, body);
  const refresh = async () => {
    let hosts;
    try {
      hosts = await get('/v1/hosts');
    } catch (err) {
      fill(body, errorBox(err));
      return;
    }
    let reservations = null;
    if (hosts.some((x) => Array.isArray(x.reservations))) {
      try {
        reservations = reservationsTable((await get('/v1/reservations')).reservations || []);
      } catch (err) {
        reservations = errorBox(err);
      }
    }
    const byState = {};
    let used = 0;
    let slots = 0;
    for (const x of hosts) {
      byState[x.state] = (byState[x.state] || 0) + 1;
      used += x.used_slots;
      slots += x.slots;
    }
    fill(body, 
        h('p', {class: 'summary'}, `${fmtNumber(hosts.length)} hosts · ${fmtNumber(used)} of ${fmtNumber(slots)} slots used · `,
            Object.entries(byState).map(([st, n]) => h('span', {class: `badge hs-${st}`}, `${st} ${n}`))),
        h('ul', {class: 'tiles', 'aria-label': 'Hosts'}, hosts.map((x) => tile(x, app, refresh, status))),
        h('p', {class: 'muted legend-line'}, 'Colour: grey idle, green some load, amber half or more, red full; ' +
          'striped closed or draining, dark unavailable.'),
        reservations ? [h('h2', null, 'Reservations'), reservations] : null);
    sizeMeters(body);
  };
  await refresh();
  const timer = setInterval(() => refresh().catch(() => {}), 10000);
  return {refresh, dispose: () => clearInterval(timer)};
}
