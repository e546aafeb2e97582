// Job detail (R-UI-1, R-UX-4): what `sluice jobs -l` shows — every field, the admission
// record, pending reasons with per-host detail, the hint, the estimated start — the output
// tail of a running job (GET /v1/jobs/ID/peek) and, for its owner or an administrator,
// cancel / hold / release / requeue, and the steps launched inside it (R-LAUNCH-2: `sluice
// launch`, srun, blaunch). An action asks for a second press to confirm.
import {get, post} from '../api.js';
import {fill, errorBox, fieldList, fieldText, fieldWords, fmtDuration, fmtTime, h, jobHref, jobLabel, localTimes,
  stateBadge} from '../dom.js';

const ENDED = ['DONE', 'EXIT', 'CANCELLED'];

// `?index=I` (or `&index=I`) for an array element, '' for a job.
function indexQuery(job, sep) {
  return job.index === undefined || job.index === null ? '' : `${sep}index=${job.index}`;
}

function actionsFor(job, user) {
  if (!user || (!user.admin && user.user !== job.user)) return [];
  const st = job.state;
  const out = [];
  if (!ENDED.includes(st)) out.push(['cancel', 'Cancel job']);
  if (st === 'PENDING') out.push(['hold', 'Hold']);
  if (st === 'HELD') out.push(['release', 'Release']);
  if (st === 'RUNNING' || ENDED.includes(st)) out.push(['requeue', 'Requeue']);
  return out;
}

function actionBar(job, user, done) {
  const status = h('span', {class: 'action-status', role: 'status', 'aria-live': 'polite'});
  const buttons = actionsFor(job, user).map(([verb, label]) => {
    let armed = null;
    const button = h('button', {type: 'button', class: `action a-${verb}`, 'data-action': verb,
      onclick: async () => {
        if (!armed) {
          button.textContent = `Confirm: ${label.toLowerCase()}`;
          button.classList.add('armed');
          armed = setTimeout(() => {
            armed = null;
            button.textContent = label;
            button.classList.remove('armed');
          }, 5000);
          return;
        }
        clearTimeout(armed);
        armed = null;
        button.disabled = true;
        try {
          await post(`/v1/jobs/${job.id}/${verb}${indexQuery(job, '?')}`);
          status.textContent = `${label}: done`;
          await done();
        } catch (err) {
          status.textContent = err.message;
          button.disabled = false;
          button.textContent = label;
          button.classList.remove('armed');
        }
      }}, label);
    return button;
  });
  if (buttons.length === 0) return null;
  return h('div', {class: 'actions'}, buttons, status);
}

function since(job) {
  const st = job.state;
  const at = ENDED.includes(st) ? job.end_time : ['RUNNING', 'ADMITTING'].includes(st) ?
    job.start_time : job.queued_time ?? job.submit_time;  // waiting again since a requeue
  return at ? `${st} since ${fmtTime(at)}` : st;
}

function hostsText(hosts) {
  if (!hosts || hosts.length === 0) return '-';
  return hosts.map((x) => (x.name ? `${x.name}:${x.slots}` : String(x))).join(' ');
}

function verdictRow(v) {
  const what = v.room !== undefined ? `room for ${v.room}` : v.code;
  const need = v.needed !== undefined ? `needs ${v.needed}, has ${v.available}` : '';
  return h('tr', null, h('td', null, h('a', {href: `/ui/hosts#host-${v.host}`}, v.host)),
      h('td', null, what), h('td', null, v.resource ?? ''), h('td', null, need));
}

function pendingSection(job) {
  if (!job.reason) return null;
  const r = job.reasons && typeof job.reasons === 'object' ? job.reasons : {};
  const lines = r.text && r.text.length ? r.text : [r.headline || job.reason];
  let estimate = '-';
  if (typeof job.estimated_start === 'number') {
    estimate = `${fmtTime(job.estimated_start)} (in ${fmtDuration(job.estimated_start - Date.now() / 1000)})`;
  } else if (job.unknown_because) {
    estimate = `unknown (${job.unknown_because})`;
  }
  return h('section', {class: 'pending', 'aria-labelledby': 'pending-h'},
      h('h2', {id: 'pending-h'}, 'Why it waits'),
      h('p', null, h('span', {class: 'badge reason-code'}, job.reason), ' ', r.headline || ''),
      h('ul', {class: 'reasons'}, lines.map((l) => h('li', null, localTimes(l)))),
      r.hint ? h('p', {class: 'hint'}, h('strong', null, 'What would let it start: '), localTimes(r.hint)) : null,
      h('p', null, h('strong', null, 'Estimated start: '), estimate),
      r.hosts && r.hosts.length ? h('details', {open: r.hosts.length <= 16},
          h('summary', null, `Per host (${r.hosts.length})`),
          h('table', {class: 'grid-table verdicts'},
              h('thead', null, h('tr', null, ['Host', 'Verdict', 'Resource', 'Detail'].map((t) => h('th', {scope: 'col'}, t)))),
              h('tbody', null, r.hosts.map(verdictRow)))) : null);
}

function fields(job) {
  const cpu = typeof job.cpu_seconds === 'number' ? `${job.cpu_seconds.toFixed(1)} s` : '-';
  const mem = typeof job.max_rss_mb === 'number' ? `${Math.round(job.max_rss_mb)} MB` : '-';
  const tasks = job.min_tasks !== undefined && job.min_tasks !== job.max_tasks ?
    `${job.tasks} (asked ${job.min_tasks}-${job.max_tasks})` : String(job.tasks ?? '-');
  const shown = new Set(['id', 'index', 'name', 'command', 'user', 'account', 'queue', 'project',
    'state', 'exit_code', 'cause', 'message', 'submit_time', 'start_time', 'end_time', 'tasks',
    'min_tasks', 'max_tasks', 'resreq', 'hosts', 'run_limit', 'depend', 'begin', 'cpu_seconds',
    'max_rss_mb', 'reason', 'reasons', 'admission', 'estimated_start', 'unknown_because',
    'steps']);
  const rest = Object.keys(job).filter((k) => !shown.has(k)).sort()
      .map((k) => [fieldWords(k), fieldText(k, job[k])]);
  return fieldList([
    ['Command', job.command ?? '-'], ['User', job.user], ['Runs as', job.account],
    ['Queue', job.queue], ['Project', job.project], ['State', since(job)],
    ['Exit code', job.exit_code], ['Cause', job.cause], ['Message', job.message],
    ['Submitted', fmtTime(job.submit_time)], ['Started', fmtTime(job.start_time)],
    ['Ended', fmtTime(job.end_time)], ['Tasks', tasks], ['Resource request', job.resreq],
    ['Hosts', hostsText(job.hosts)],
    ['Run limit', typeof job.run_limit === 'number' ? fmtDuration(job.run_limit) : job.run_limit],
    ['Dependency', job.depend], ['Begin', typeof job.begin === 'number' ? fmtTime(job.begin) : job.begin],
    ['CPU time', cpu], ['Peak memory', mem], ...rest]);
}

// Its steps as `sluice jobs -l` lists them: ID.N, host, state, exit, times, CPU, memory, command.
function steps(job) {
  if (!Array.isArray(job.steps) || job.steps.length === 0) return null;
  const exit = (st) => st.exit_code === null || st.exit_code === undefined ? '-' :
    st.signal ? `${st.exit_code} (signal ${st.signal})` : String(st.exit_code);
  const row = (st) => h('tr', null,
      h('td', null, `${jobLabel(job)}.${st.step}`), h('td', null, st.host), h('td', null, stateBadge(st.state)),
      h('td', null, exit(st)), h('td', null, fmtTime(st.start_time)),
      h('td', null, st.end_time ? fmtTime(st.end_time) : '-'),
      h('td', null, typeof st.cpu_seconds === 'number' ? `${st.cpu_seconds.toFixed(2)} s` : '-'),
      h('td', null, typeof st.max_rss_mb === 'number' ? `${Math.round(st.max_rss_mb)} MB` : '-'),
      h('td', {class: 'command'}, st.command));
  return h('section', {class: 'steps'}, h('h2', null, `Steps (${job.steps.length})`),
      h('table', null,
          h('thead', null, h('tr', null, ['Step', 'Host', 'State', 'Exit', 'Started', 'Ended', 'CPU',
            'Peak memory', 'Command'].map((t) => h('th', {scope: 'col'}, t)))),
          h('tbody', null, job.steps.map(row))));
}

function admission(job) {
  const a = job.admission;
  if (!a || typeof a !== 'object') return null;
  const rows = Object.entries(a).map(([k, v]) => [fieldWords(k),
    k === 'pending_age' && typeof v === 'number' ? fmtDuration(v) : fieldText(k, v)]);
  return h('details', {class: 'admission'}, h('summary', null, 'Admission record'), fieldList(rows));
}

async function outputTail(job, box) {
  if (job.state !== 'RUNNING') return;
  if (!job.output || job.output === '/dev/null') {  // the agent would only answer 409
    fill(box, h('h2', null, 'Output'),
        h('p', {class: 'muted'}, 'This job keeps no output (submit with -o FILE to peek at it).'));
    return;
  }
  try {
    const peek = await get(`/v1/jobs/${job.id}/peek?lines=40${indexQuery(job, '&')}`);
    fill(box, h('h2', null, `Output (last lines${peek.host ? `, on ${peek.host}` : ''})`),
        h('pre', {class: 'output', tabindex: 0}, peek.text || '(no output yet)'));
  } catch (err) {
    fill(box, h('h2', null, 'Output'), errorBox(err));
  }
}

// An array's elements (issue 47.5), a page of them in index order, each linking to its page;
// those with no object of their own yet (waiting) are counted in the array's fields.
async function elements(job, box) {
  if (!job.array) return;
  try {
    const list = await get(`/v1/jobs?array=${job.id}&offset=0&limit=200&sort=id&order=asc&user=all` +
      '&fields=id,index,state,reason,exit_code,start_time,end_time,hosts');
    const counts = job.elements && typeof job.elements === 'object' ?
      Object.entries(job.elements).filter(([, n]) => n > 0).map(([st, n]) => `${n} ${st}`).join(', ') : '';
    fill(box, h('h2', null, `Elements${counts ? ` (${counts})` : ''}`),
        list.length === 0 ? h('p', {class: 'muted'}, 'No element has started yet.') :
          h('div', {class: 'table-wrap'}, h('table', {class: 'grid-table elements'},
              h('thead', null, h('tr', null, ['Element', 'State', 'Reason / exit', 'Started', 'Ended', 'Hosts']
                  .map((t) => h('th', {scope: 'col'}, t)))),
              h('tbody', null, list.map((e) => h('tr', {'data-job': jobLabel(e)},
                  h('td', null, h('a', {href: jobHref(e)}, jobLabel(e))),
                  h('td', null, stateBadge(e.state)),
                  h('td', null, e.reason || (e.exit_code !== null && e.exit_code !== undefined ? `exit ${e.exit_code}` : '')),
                  h('td', null, fmtTime(e.start_time)), h('td', null, fmtTime(e.end_time)),
                  h('td', null, hostsText(e.hosts))))))));
  } catch (err) {
    fill(box, h('h2', null, 'Elements'), errorBox(err));
  }
}

export async function mount(root, params, app) {
  const body = h('div', {class: 'job'});
  root.append(h('p', {class: 'crumbs'}, h('a', {href: '/ui/jobs'}, '← Jobs')), body);
  const named = params.index === undefined ? String(params.id) : `${params.id}[${params.index}]`;
  const refresh = async () => {
    let job;
    try {
      job = await get(`/v1/jobs/${params.id}${params.index === undefined ? '' : `?index=${params.index}`}`);
    } catch (err) {
      fill(body, h('h1', null, `Job ${named}`), errorBox(err));
      return;
    }
    document.title = `Job ${jobLabel(job)} · Sluice`;
    const out = h('section', {class: 'output-box'});
    const members = h('section', {class: 'elements-box'});
    const title = job.array ? `Job array ${job.id}[${job.array}]` : `Job ${jobLabel(job)}`;
    const up = job.index !== undefined && job.index !== null ?
      h('p', {class: 'crumbs'}, 'Element of ', h('a', {href: `/ui/jobs/${job.id}`}, `array ${job.id}`)) : null;
    fill(body,
        h('h1', null, title, job.name ? `: ${job.name}` : '', ' ', stateBadge(job.state)), up,
        actionBar(job, app.user, refresh), pendingSection(job), out, members, fields(job),
        steps(job), admission(job));
    await Promise.all([outputTail(job, out), elements(job, members)]);
  };
  await refresh();
  return {refresh};
}
