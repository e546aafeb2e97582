"""scripts/lib/nemesis_check.py - the checker of scripts/nemesis's histories (R-FAULT-1, issue 44).

Pure: no I/O, no clock, no randomness; every time is a wall-clock second (time.time() in the
nemesis, `date +%s.%N` in the jobs: one machine, one realtime clock, which time namespaces do
not shift). `check()` takes

  acknowledged  [{"serial": S, "id": N, "time": T}]: submission S was answered with job id N at T
                (a retried submission keeps its serial and Idempotency-Key);
  log_lines     the jobs' shared log, one run's event per line (job.sh of scripts/nemesis):
                  start ID TOKEN TIME SERIAL HOST EPOCH   (EPOCH "-" when the agent sets none)
                  tick  ID TOKEN TIME                      (every TICK seconds while it runs)
                  end   ID TOKEN TIME
                TOKEN is random per run, so two runs of one job are told apart;
  samples       the controllers' /healthz answers: {"controller", "sent", "received", "role",
                "epoch", "writable"}, role None when it did not answer;
  host_losses   the controllers' requeues of a job because its host was lost (or its agent
                fenced itself): [{"id", "host", "time"}] (from their logs);

and returns the figures of R-FAULT-1 (plus `details` naming the offending jobs and samples):

  lost             acknowledged ids with no run that reached its end line;
  completed_twice  ids with two runs that both reached their end line, but for the reruns
                   after a host loss (below);
  rerun_after_host_loss  ids completed twice where each earlier completed run's host was
                   declared lost with the job while that run's end was unreported (it ended
                   in the partition), and the next run started after that: on_host_loss
                   requeue is at least once for a run whose end its controller could not know
                   (docs/reliability.md); reported, not counted as a violation;
  ran_concurrently ids with two runs alive at once: the times each run was seen alive (start to
                   its last tick or end) overlap. A run killed between two ticks lived up to one
                   tick longer than seen, so overlaps shorter than a tick can go unnoticed; none
                   is ever reported that did not happen;
  dual_leader      stale leader claims plus stale launches (below);
  duplicate_ids    ids given to two submissions (two serials, in the acknowledgements or in the
                   runs' start lines);
  max_unavailable_seconds  the longest time between two moments at which some controller
                   answered as a writable leader (a /healthz answer or an acknowledged
                   submission), over the sampled period;
  failovers        seconds from the last writable answer of one epoch to the first of the next.

A stale leader claim is a /healthz answer `role: leader` with epoch e sent after another
controller's `role: leader` answer with an epoch >= e had been received: epochs only grow, so
the newer leader's election had ended the older one's lease while it still claimed to lead. A
stale launch is a run of epoch e that started more than `fence_slack` seconds after a run of
an epoch > e had started (an old leader still dispatching after a new one took over); the slack
absorbs a launch sent just before the old lease ran out and still on its way. Epochs come from
SLUICE_EPOCH; runs without one are left out of that check.
"""
DETAIL_LIMIT = 50  # entries per list in `details`, so the JSON stays readable


class Run:
    """One run of a job: the lines that share an id and a token."""

    def __init__(self, job, token):
        self.job, self.token = job, token
        self.start = self.last = self.end = None
        self.serial = self.host = self.epoch = None

    def seen(self, t):
        self.start = t if self.start is None else min(self.start, t)
        self.last = t if self.last is None else max(self.last, t)

    def as_dict(self):
        return {"token": self.token, "host": self.host, "epoch": self.epoch,
                "start": self.start, "last": self.last, "end": self.end}


def parse_runs(log_lines):
    """The runs of the log, keyed by (id, token), and the number of lines that did not parse."""
    runs, malformed = {}, 0
    for line in log_lines:
        f = line.split()
        try:
            kind, job, token, t = f[0], int(f[1]), f[2], float(f[3])
        except (IndexError, ValueError):
            malformed += 1
            continue
        if kind not in ("start", "tick", "end") or (kind == "start" and len(f) < 7):
            malformed += 1
            continue
        run = runs.setdefault((job, token), Run(job, token))
        run.seen(t)
        if kind == "start":
            run.serial, run.host = f[4], f[5]
            run.epoch = int(f[6]) if f[6].isdigit() else None
        elif kind == "end":
            run.end = t
    return runs, malformed


def runs_by_job(runs):
    by_job = {}
    for run in runs.values():
        by_job.setdefault(run.job, []).append(run)
    for job_runs in by_job.values():
        job_runs.sort(key=lambda r: r.start)
    return by_job


def overlapping_runs(by_job):
    """{id: [runs]} of the jobs with two runs seen alive at the same time."""
    out = {}
    for job, job_runs in by_job.items():
        latest = job_runs[0].last  # runs sorted by start: the latest moment seen alive so far
        for run in job_runs[1:]:
            if run.start < latest:
                out[job] = job_runs
                break
            latest = max(latest, run.last)
    return out


def duplicate_ids(acknowledged, by_job):
    """{id: sorted serials} of the ids that name two submissions."""
    serials = {}
    for ack in acknowledged:
        serials.setdefault(ack["id"], set()).add(str(ack["serial"]))
    for job, job_runs in by_job.items():
        for run in job_runs:
            if run.serial is not None:
                serials.setdefault(job, set()).add(run.serial)
    return {job: sorted(s) for job, s in serials.items() if len(s) > 1}


def stale_launches(runs, fence_slack):
    """Runs of an epoch that started more than fence_slack s after a run of a newer epoch."""
    known = [r for r in runs if r.epoch is not None]
    first = {}  # epoch: its earliest run
    for r in known:
        if r.epoch not in first or r.start < first[r.epoch].start:
            first[r.epoch] = r
    earliest_newer, best = {}, None  # epoch: the earliest run of any higher epoch
    for epoch in sorted(first, reverse=True):
        earliest_newer[epoch] = best
        if best is None or first[epoch].start < best.start:
            best = first[epoch]
    out = []
    for run in sorted(known, key=lambda r: r.start):
        newer = earliest_newer[run.epoch]
        if newer is not None and run.start > newer.start + fence_slack:
            out.append({"id": run.job, "epoch": run.epoch, "host": run.host, "start": run.start,
                        "newer_id": newer.job, "newer_epoch": newer.epoch,
                        "newer_host": newer.host, "newer_start": newer.start})
    return out


def stale_leader_claims(samples):
    """Leader answers sent after another controller's leader answer of an epoch at least as
    high had been received."""
    leaders = [s for s in samples if s.get("role") == "leader"]
    by_received = sorted(leaders, key=lambda s: s["received"])
    highest, i, out = {}, 0, []  # highest: controller -> its highest-epoch answer received so far
    for s in sorted(leaders, key=lambda s: s["sent"]):
        while i < len(by_received) and by_received[i]["received"] < s["sent"]:
            r = by_received[i]
            if r["controller"] not in highest or r["epoch"] > highest[r["controller"]]["epoch"]:
                highest[r["controller"]] = r
            i += 1
        rival = max((r for c, r in highest.items() if c != s["controller"]),
                    key=lambda r: r["epoch"], default=None)
        if rival is not None and rival["epoch"] >= s["epoch"]:
            out.append({"controller": s["controller"], "epoch": s["epoch"], "sent": s["sent"],
                        "rival": rival["controller"], "rival_epoch": rival["epoch"],
                        "rival_received": rival["received"]})
    return out


def writable_moments(samples, acknowledged):
    """(time, epoch or None) of every answer of a writable leader, in time order."""
    moments = [(s["received"], s["epoch"]) for s in samples
               if s.get("role") == "leader" and s.get("writable")]
    moments += [(a["time"], None) for a in acknowledged]
    return sorted(moments, key=lambda m: m[0])


def max_unavailable(samples, moments):
    """The longest stretch of the sampled period without a writable leader's answer."""
    if not samples:
        return 0.0
    begin = min(s["sent"] for s in samples)
    end = max(s["received"] for s in samples)
    points = [begin] + [t for t, _ in moments if begin <= t <= end] + [end]
    return max((b - a for a, b in zip(points, points[1:])), default=0.0)


def failovers(moments):
    """Each change of the writable leader's epoch: {"at", "from_epoch", "to_epoch", "seconds"}."""
    out, epoch, last = [], None, None
    for t, e in moments:
        if e is None or (epoch is not None and e < epoch):
            continue  # an acknowledgement names no epoch; a lower epoch is a stale answer
        if epoch is not None and e > epoch:
            out.append({"at": t, "from_epoch": epoch, "to_epoch": e, "seconds": t - last})
        epoch, last = e, t
    return out


def explained_by_host_loss(completed_runs, losses):
    """Whether every completed run but the last was lost with its host after it began, and the
    next completed run began after that loss."""
    for run, next_run in zip(completed_runs, completed_runs[1:]):
        if not any(loss["host"] == run.host and run.start <= loss["time"] <= next_run.start
                   for loss in losses):
            return False
    return True


def check(acknowledged, log_lines, samples, fence_slack=1.0, host_losses=()):
    """The figures of R-FAULT-1 for one history; see the module's docstring."""
    runs, malformed = parse_runs(log_lines)
    by_job = runs_by_job(runs)
    acked_ids = {a["id"] for a in acknowledged}
    completed = {job: [r for r in rs if r.end is not None] for job, rs in by_job.items()}
    lost = sorted(i for i in acked_ids if not completed.get(i))
    losses = {}
    for loss in host_losses:
        losses.setdefault(loss["id"], []).append(loss)
    doubled = sorted(job for job, rs in completed.items() if len(rs) > 1)
    rerun = [j for j in doubled if explained_by_host_loss(completed[j], losses.get(j, []))]
    twice = [j for j in doubled if j not in set(rerun)]
    concurrent = overlapping_runs(by_job)
    duplicates = duplicate_ids(acknowledged, by_job)
    launches = stale_launches(runs.values(), fence_slack)
    claims = stale_leader_claims(samples)
    moments = writable_moments(samples, acknowledged)
    changes = failovers(moments)

    def runs_of(jobs):
        return [{"id": j, "runs": [r.as_dict() for r in by_job[j]]} for j in jobs][:DETAIL_LIMIT]
    return {
        "acknowledged": len(acked_ids),
        "lost": len(lost),
        "ran_concurrently": len(concurrent),
        "completed_twice": len(twice),
        "rerun_after_host_loss": len(rerun),
        "dual_leader": len(claims) + len(launches),
        "duplicate_ids": len(duplicates),
        "max_unavailable_seconds": round(max_unavailable(samples, moments), 2),
        "failovers": [round(c["seconds"], 2) for c in changes],
        "details": {
            "lost": lost[:DETAIL_LIMIT],
            "completed_twice": runs_of(twice),
            "rerun_after_host_loss": runs_of(rerun),
            "ran_concurrently": runs_of(sorted(concurrent)),
            "duplicate_ids": [{"id": j, "serials": s} for j, s in sorted(duplicates.items())],
            "stale_leader_claims": claims[:DETAIL_LIMIT],
            "stale_launches": launches[:DETAIL_LIMIT],
            "failovers": changes,
            "runs": len(runs),
            "jobs_run_more_than_once": sum(len(rs) > 1 for rs in by_job.values()),
            "unacknowledged_jobs_run": sorted(set(by_job) - acked_ids)[:DETAIL_LIMIT],
            "runs_without_epoch": sum(r.epoch is None for r in runs.values()),
            "malformed_lines": malformed,
        },
    }
