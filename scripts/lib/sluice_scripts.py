"""scripts/lib/sluice_scripts.py - the helpers the Python scripts of scripts/ share (issue 38).

A script imports it by its own path, so it works from any directory:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "lib"))
    import sluice_scripts as lib  # noqa: E402

Standard library only. Processes are stopped by the PID of the Popen that started them, never
by name; every wait is bounded. Output conventions: progress on stderr (log), figures on
stdout. The bash scripts share scripts/lib/common.sh.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

# The checkout: scripts/lib/ is two levels below it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def default_sluice():
    """The sluice binary: $SLUICE, else build/sluice of the checkout."""
    return os.environ.get("SLUICE", os.path.join(ROOT, "build", "sluice"))


def log(message):
    """A timestamped progress line on stderr."""
    print(time.strftime("[%H:%M:%S] ") + message, file=sys.stderr, flush=True)


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def until(cond, timeout, step=0.05):
    """Calls cond() every `step` seconds until it is true or `timeout` seconds have passed;
    returns its last value."""
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(step)
    return cond()


def spawn(argv, logfile, **popen_args):
    """Starts argv with stdout and stderr appended to `logfile` and no stdin."""
    return subprocess.Popen(argv, stdout=open(logfile, "ab"), stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, **popen_args)


def stop_signal(p):
    """SIGINT for perf (it then writes its data), SIGTERM for everything else."""
    return signal.SIGINT if str(p.args[0]).endswith("perf") else signal.SIGTERM


def stop_processes(procs, timeout):
    """Stops the processes of `procs` (Popen objects) one after the other, in that order: each
    that still runs gets SIGCONT (a stopped process could not act on what follows) and its stop
    signal, and SIGKILL if it still runs `timeout` seconds later."""
    for p in procs:
        if p.poll() is not None:
            continue
        try:
            os.kill(p.pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        p.send_signal(stop_signal(p))
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class Processes:
    """The processes a script started, stopped together by PID at its end."""

    def __init__(self):
        self.procs = []

    def spawn(self, argv, logfile, **popen_args):
        p = spawn(argv, logfile, **popen_args)
        self.procs.append(p)
        return p

    def stop_all(self, timeout):
        """Stops them, last started first (agents before their server, a server before its
        store), each within `timeout` seconds before SIGKILL."""
        stop_processes(list(reversed(self.procs)), timeout)
        self.procs.clear()


def http_request(url, method="GET", body=None, token=None, timeout=10, headers=None):
    """One request; `body` is bytes or a value sent as JSON; `headers` are added. Returns
    (status, reply bytes); status 0 when there was no answer (refused, timed out), the bytes
    then say why."""
    data = None if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", **(headers or {})}
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(url, method=method, data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except Exception as e:  # connection refused while starting, timeouts
        return 0, str(e).encode()


def http_json(url, method="GET", body=None, token=None, timeout=10, headers=None):
    """As http_request, with the reply parsed: (status, value) on success; (status, None) for
    an error status; (0, None) without an answer or with a reply that is not JSON."""
    status, data = http_request(url, method, body, token, timeout, headers)
    if not 200 <= status < 300:  # urlopen raises for every other status
        return status, None
    try:
        return status, json.loads(data or b"null")
    except ValueError:
        return 0, None


def proc_cpu_and_peak_rss(pid):
    """(user + system CPU seconds, peak RSS in MB (VmHWM)) of a running process, from /proc.
    Raises OSError when it is gone."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    hwm = 0.0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
    return cpu, hwm


def percentile(values, q):
    """The q-quantile (0..1) of `values` by the nearest rank below; None when empty."""
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def dispatch_seconds(starts, ready, ends, slots):
    """R-SCALE-2's dispatch time of each start (scripts/e2e-scale): starts[k] (sorted) - the
    moment the k-th started job was ready: ready[k] (its release or acknowledgement) or, for
    one-slot jobs beyond the cluster's `slots`, the (k - slots)-th job end (sorted `ends`: a slot
    freed), whichever is later."""
    out = []
    for k, t in enumerate(starts):
        r = ready[k]
        if k >= slots and k - slots < len(ends):
            r = max(r, ends[k - slots])
        out.append(max(0.0, t - r))
    return out


def etcd_member_argv(etcd, name, data_dir, client_port, peer_port, initial_cluster,
                     host="127.0.0.1"):
    """The command line of one member of a new etcd cluster on `host` (loopback by default); the
    caller appends its own tuning (heartbeat, request and transaction limits)."""
    client = f"http://{host}:{client_port}"
    peer = f"http://{host}:{peer_port}"
    return [etcd, "--name", name, "--data-dir", data_dir,
            "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", initial_cluster, "--initial-cluster-state", "new"]
