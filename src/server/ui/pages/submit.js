// Submit (issue 47.9): a job from the browser, as `sluice submit` would send it (POST /v1/jobs,
// docs/api.md). One line of command runs as `/bin/sh -c LINE`; several lines are a job script
// (its `#!` interpreter, else /bin/sh). The form's Idempotency-Key makes a second press or a
// retried request the same job. On success the job's page opens; a refusal (a bad resource
// request, a job no host could hold) is shown with the form kept as typed.
import {api, get} from '../api.js';
import {errorBox, fill, h} from '../dom.js';

// A run limit as `-W` takes it: MINUTES or HOURS:MINUTES. Seconds, or an error text.
export function parseRunLimit(text) {
  const t = text.trim();
  if (t === '') return {seconds: null};
  const m = /^(?:(\d+):)?(\d+)$/.exec(t);
  if (!m || (m[1] !== undefined && Number(m[2]) >= 60)) {
    return {error: `Run limit "${t}": expected minutes (90) or hours:minutes (1:30)`};
  }
  const seconds = (Number(m[1] ?? 0) * 60 + Number(m[2])) * 60;
  if (seconds <= 0) return {error: 'Run limit: expected more than 0 minutes'};
  return {seconds};
}

// The request body from the form's fields; {error} when a field cannot be read.
export function submitBody(f) {
  const command = f.command.replace(/^\s*\n/, '').replace(/\s+$/, '');  // a #! may open it
  if (command.trim() === '') return {error: 'Command: expected a command line or a script'};
  const body = command.includes('\n') ? {script: `${command}\n`} : {command: command.trim()};
  const limit = parseRunLimit(f.run_limit);
  if (limit.error) return {error: limit.error};
  if (limit.seconds !== null) body.run_limit = limit.seconds;
  const tasks = f.tasks.trim();
  if (tasks !== '') {
    if (!/^\d+$/.test(tasks) || Number(tasks) < 1) return {error: `Tasks "${tasks}": expected a whole number, 1 or more`};
    body.tasks = Number(tasks);
  }
  for (const key of ['name', 'queue', 'resreq', 'cwd', 'output', 'array']) {
    const value = f[key].trim();
    if (value !== '') body[key] = value;
  }
  if (f.hold) body.hold = true;
  return {body};
}

function field(id, label, input, help) {
  return h('div', {class: 'form-row'}, h('label', {for: id}, label), input,
      help ? h('small', {id: `${id}-help`, class: 'muted'}, help) : null);
}

function text(id, placeholder, extra = {}) {
  return h('input', {id, name: id, type: 'text', placeholder, autocomplete: 'off',
    'aria-describedby': `${id}-help`, ...extra});
}

function newKey() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return `ui-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export async function mount(root, params, app) {
  document.title = 'Submit a job · Sluice';
  const queues = await get('/v1/queues');
  // One per job: kept while the same request is retried (a lost answer), new when the request
  // changes or after a success, so that an edited form is a new job.
  let key = newKey();
  let keyFor = '';
  const status = h('div', {class: 'submit-status', role: 'status', 'aria-live': 'polite'});
  const queue = h('select', {id: 'queue', name: 'queue', 'aria-describedby': 'queue-help'},
      h('option', {value: ''}, 'the default queue'),
      queues.filter((q) => q.open).map((q) => h('option', {value: q.name}, q.name)));
  const button = h('button', {type: 'submit', class: 'primary'}, 'Submit');
  const form = h('form', {class: 'submit-form', novalidate: true, onsubmit: async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const f = Object.fromEntries(['command', 'name', 'queue', 'tasks', 'resreq', 'run_limit', 'cwd',
      'output', 'array'].map((k) => [k, String(data.get(k) ?? '')]));
    f.hold = data.get('hold') === 'on';
    const built = submitBody(f);
    if (built.error) {
      fill(status, errorBox(built.error));
      return;
    }
    const sent = JSON.stringify(built.body);
    if (sent !== keyFor) {
      key = newKey();
      keyFor = sent;
    }
    button.disabled = true;
    fill(status, 'Submitting…');
    try {
      const {data: reply} = await api('/v1/jobs', {method: 'POST', body: built.body,
        headers: {'Idempotency-Key': key}});
      keyFor = '';
      app.navigate(`/ui/jobs/${reply.id}`);
    } catch (err) {
      fill(status, errorBox(err));
      button.disabled = false;
    }
  }},
  field('command', 'Command', h('textarea', {id: 'command', name: 'command', rows: 6, required: true,
    spellcheck: 'false', 'aria-describedby': 'command-help', placeholder: 'python3 train.py --epochs 10'}),
  'One line runs with /bin/sh -c; several lines are a job script (its #! line, else /bin/sh).'),
  field('name', 'Name', text('name', 'train')),
  field('queue', 'Queue', queue),
  field('tasks', 'Tasks', text('tasks', '1', {inputmode: 'numeric'}), 'Slots to run on (-n).'),
  field('resreq', 'Resource request', text('resreq', 'select[mem>4000] rusage[mem=2000]'),
      'As -R takes it; the queue\'s default when empty.'),
  field('run_limit', 'Run limit', text('run_limit', '90 or 1:30'),
      'Minutes or hours:minutes; the job is killed after it (-W).'),
  field('cwd', 'Working directory', text('cwd', '/home/you/project'),
      'On the host that runs it; the agent\'s directory when empty.'),
  field('output', 'Output file', text('output', 'sluice-%j.out'),
      'Standard output and error, relative to the working directory; %j is the job id. Empty: ' +
      'sluice-%j.out there (an array\'s elements: sluice-%A_%a.out).'),
  field('array', 'Array indexes', text('array', '1-100%10'),
      'Makes a job array: indexes, then %N to run at most N at once.'),
  h('div', {class: 'form-row check'}, h('input', {id: 'hold', name: 'hold', type: 'checkbox'}),
      h('label', {for: 'hold'}, 'Submit held (starts only when released)')),
  h('div', {class: 'form-row'}, button), status);
  root.append(h('h1', null, 'Submit a job'),
      h('p', {class: 'muted'}, `It runs as ${app.user ? app.user.user : 'you'}, with the account the cluster maps to that user.`),
      form);
  return {};
}
