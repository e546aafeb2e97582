// The REST API as the dashboard calls it (docs/api.md): the user's token from sessionStorage
// (R-UI-2) in every request's Authorization header, errors as ApiError, and the event stream
// read with fetch (EventSource cannot send the header).

const TOKEN_KEY = 'sluice.token';

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// R-UI-2: a token in the fragment (#token=T) is kept and removed from the address bar.
export function takeFragmentToken() {
  const match = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (!match) return false;
  setToken(decodeURIComponent(match[1]));
  history.replaceState(history.state, '', location.pathname + location.search);
  return true;
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// GET (or `method`) `path`; resolves to {data, total} (total: X-Total-Count, or NaN).
export async function api(path, {method = 'GET', body, signal, headers: extra = {}} = {}) {
  const headers = {...extra, Authorization: `Bearer ${token()}`};
  let payload;
  if (method !== 'GET') {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body === undefined ? {} : body);
  }
  let res;
  try {
    res = await fetch(path, {method, headers, body: payload, signal, cache: 'no-store'});
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, `cannot reach the server (${err.message})`);
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!res.ok) {
    const message = data && data.error ? data.error : `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, `${method} ${path.split('?')[0]}: ${message}`);
  }
  return {data, total: Number(res.headers.get('X-Total-Count') ?? NaN)};
}

export async function get(path, options) {
  return (await api(path, options)).data;
}

export async function post(path, body) {
  return (await api(path, {method: 'POST', body})).data;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Reads GET /v1/events and calls onEvent({id, state, reason, ...}) per job event and
// onLive(true|false) as the stream connects and drops; reconnects after 3 s. Returns stop().
export function streamEvents(onEvent, onLive) {
  let stopped = false;
  let controller = null;
  const dispatch = (block) => {
    const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5));
    if (data.length === 0) return;
    try {
      onEvent(JSON.parse(data.join('\n')));
    } catch {
      // a malformed event is skipped; the next refresh shows the truth
    }
  };
  const run = async () => {
    while (!stopped) {
      controller = new AbortController();
      try {
        const res = await fetch('/v1/events', {
          headers: {Authorization: `Bearer ${token()}`},
          signal: controller.signal,
          cache: 'no-store',
        });
        if (!res.ok || !res.body) throw new Error(`status ${res.status}`);
        onLive(true);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const {value, done} = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            dispatch(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
          }
        }
      } catch {
        // dropped or refused: retried below
      }
      if (stopped) return;
      onLive(false);
      await sleep(3000);
    }
  };
  run();
  return () => {
    stopped = true;
    if (controller) controller.abort();
  };
}
