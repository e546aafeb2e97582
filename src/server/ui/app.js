// The dashboard's shell (docs/design/dashboard.md): login, the router (each page has its
// own address: /ui/, /ui/jobs, /ui/jobs/ID, /ui/jobs/ID[INDEX], /ui/hosts, /ui/hosts/NAME,
// /ui/queues, /ui/history, /ui/submit), and live updates — job
// events from GET /v1/events make the current page refresh, at most once a second.
import {ApiError, get, setToken, streamEvents, takeFragmentToken, token} from './api.js';
import {clear, errorBox, h} from './dom.js';
import * as overview from './pages/overview.js';
import * as jobs from './pages/jobs.js';
import * as job from './pages/job.js';
import * as hosts from './pages/hosts.js';
import * as host from './pages/host.js';
import * as historyPage from './pages/history.js';
import * as queues from './pages/queues.js';
import * as submit from './pages/submit.js';

const main = document.getElementById('main');
const app = {
  user: null,   // {user, admin} from GET /v1/whoami
  page: null,   // the mounted page: {refresh?, dispose?}
  navigate,
};

function route(path) {
  const rest = path.replace(/^\/ui\/?/, '').replace(/\/+$/, '');
  if (rest === '') return {module: overview, name: 'overview', params: {}};
  if (rest === 'jobs') return {module: jobs, name: 'jobs', params: {}};
  // /ui/jobs/ID, and /ui/jobs/ID[INDEX] for an element of array ID (issue 47.5).
  let decoded = rest;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    // a malformed escape: matched as typed
  }
  const m = /^jobs\/(\d+)(?:\[(\d+)\])?$/.exec(decoded);
  if (m) {
    return {module: job, name: 'jobs',
      params: {id: Number(m[1]), index: m[2] === undefined ? undefined : Number(m[2])}};
  }
  if (rest === 'hosts') return {module: hosts, name: 'hosts', params: {}};
  const hm = /^hosts\/([^/]+)$/.exec(decoded);
  if (hm) return {module: host, name: 'hosts', params: {name: hm[1]}};
  if (rest === 'history') return {module: historyPage, name: 'history', params: {}};
  if (rest === 'queues') return {module: queues, name: 'queues', params: {}};
  if (rest === 'submit') return {module: submit, name: 'submit', params: {}};
  return null;
}

function markNav(name) {
  for (const a of document.querySelectorAll('nav a[data-page]')) {
    if (a.dataset.page === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

async function render() {
  if (app.page && app.page.dispose) app.page.dispose();
  app.page = null;
  clear(main);
  const target = route(location.pathname);
  if (!target) {
    markNav('');
    document.title = 'Not found · Sluice';
    main.append(h('h1', null, 'No such page'),
        h('p', null, h('a', {href: '/ui/', 'data-nav': true}, 'Back to the overview')));
    return;
  }
  markNav(target.name);
  try {
    app.page = (await target.module.mount(main, target.params, app)) || {};
  } catch (err) {
    main.append(errorBox(err));
    if (err instanceof ApiError && err.status === 401) showLogin('The token was refused.');
  }
}

function navigate(url, {replace = false} = {}) {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  render();
  main.focus({preventScroll: true});
}

// Links marked data-nav (and any same-app link) change the page without a reload.
document.addEventListener('click', (e) => {
  const a = e.target.closest('a[href]');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/ui')) return;
  if (a.target || a.hasAttribute('download')) return;
  e.preventDefault();
  navigate(url.pathname + url.search);
});
window.addEventListener('popstate', render);

// Live updates: refresh the page after events, at most once a second.
let refreshTimer = null;
let lastRefresh = 0;
function scheduleRefresh() {
  if (refreshTimer) return;
  const wait = Math.max(0, 1000 - (Date.now() - lastRefresh));
  refreshTimer = setTimeout(async () => {
    refreshTimer = null;
    lastRefresh = Date.now();
    if (app.page && app.page.refresh) {
      try {
        await app.page.refresh();
      } catch {
        // the page shows its own errors on the next full render
      }
    }
  }, wait);
}

function setLive(on) {
  const live = document.getElementById('live');
  live.textContent = on ? 'live' : 'offline';
  live.classList.toggle('on', on);
}

function showLogin(message) {
  setToken('');
  clear(main);
  markNav('');
  document.title = 'Log in · Sluice';
  const input = h('input', {id: 'token', name: 'token', type: 'password', autocomplete: 'off',
    required: true, 'aria-describedby': 'token-help'});
  const form = h('form', {class: 'login', onsubmit: (e) => {
    e.preventDefault();
    setToken(input.value.trim());
    start();
  }},
  h('h1', null, 'Log in'),
  message ? h('p', {class: 'error', role: 'alert'}, message) : null,
  h('label', {for: 'token'}, 'User token'), input,
  h('p', {id: 'token-help', class: 'muted'},
      'Your Sluice token (auth.users in the cluster YAML). It stays in this tab only ' +
      '(sessionStorage). A link with #token=TOKEN logs in directly.'),
  h('button', {type: 'submit'}, 'Log in'));
  main.append(form);
  input.focus();
}

let stopEvents = null;
async function start() {
  if (!token()) return showLogin('');
  try {
    app.user = await get('/v1/whoami');
  } catch (err) {
    return showLogin(err instanceof ApiError && err.status === 401 ? 'The token was refused.' :
      err.message);
  }
  document.getElementById('who').textContent = app.user.admin ? `${app.user.user} (admin)` :
    app.user.user;
  const logout = document.getElementById('logout');
  logout.hidden = false;
  logout.onclick = () => {
    if (stopEvents) stopEvents();
    stopEvents = null;
    setLive(false);
    document.getElementById('who').textContent = '';
    logout.hidden = true;
    showLogin('');
  };
  if (!stopEvents) stopEvents = streamEvents(scheduleRefresh, setLive);
  await render();
}

// A page kept in the back/forward cache must not keep its stream: browsers allow six
// connections per server, and each cached page would hold one.
window.addEventListener('pagehide', () => {
  if (stopEvents) stopEvents();
  stopEvents = null;
});
window.addEventListener('pageshow', (e) => {
  if (e.persisted && !stopEvents && token() && app.user) {
    stopEvents = streamEvents(scheduleRefresh, setLive);
  }
});

takeFragmentToken();
start();
