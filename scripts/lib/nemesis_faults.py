"""scripts/lib/nemesis_faults.py - the faults scripts/nemesis injects (R-FAULT-1, issue 44).

`Nemesis(cluster, net, rng, ...).run(seconds, require_all)` injects one fault at a time, each
for a few seconds, then heals it and waits a moment before the next. Kinds are drawn from
seeded shuffles of KINDS, so every kind comes early and a seed replays the same schedule (the
targets that depend on who leads at the time may differ). Each fault is recorded as
{"kind", "target", "start", "end", "detail"} (seconds since the run began), or with "skipped"
and the reason when the machine cannot inject it (a clock jump without time namespaces).

`cluster` is scripts/nemesis's Cluster: node names and IPs (etcd, controllers, agents), the
current leader, `pid(node)`, and `hold_down(node)` / `restart(node, clock_offset)` around a
kill. `net` is netns.Network. Nothing here sleeps as a pass criterion: the sleeps are the
faults' durations.
"""
import os
import signal
import subprocess
import sys
import time

import sluice_scripts as lib

KINDS = ["partition_leader_etcd", "partition_leader_agents", "partition_agent",
         "partition_etcd_minority", "asymmetric", "netem", "pause", "kill", "clock"]
NFQUEUE_HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nfqueue_netem.py")


def time_namespace_unavailable():
    """Why a controller cannot be started with a shifted clock here, or None."""
    try:
        r = subprocess.run(["unshare", "--time", "--monotonic", "1", "--boottime", "1", "true"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return f"unshare --time: {e}"
    return None if r.returncode == 0 else f"unshare --time: {r.stderr.strip() or r.returncode}"


class Nemesis:
    """The fault schedule and its record; one fault at a time, healed before the next.

    Each kind is a method returning {"target", "seconds", "detail", "heal"} with the fault in
    place (or {"skipped": why}); inject() keeps it for `seconds`, then calls heal."""

    def __init__(self, cluster, net, rng, procs, logs, netem_in_kernel, timens_why, lease):
        self.cluster, self.net, self.rng, self.procs = cluster, net, rng, procs
        self.logs = logs  # directory of the helpers' logs
        self.netem_in_kernel = netem_in_kernel
        self.timens_why = timens_why
        self.lease = lease  # {"leader": s, "agent": s}: pauses outlast these
        self.t0 = time.time()
        self.records = []

    # The schedule.

    def run(self, seconds, require_all, stop):
        """Injects faults until `seconds` have passed (and, with `require_all`, every kind was
        tried) or `stop` is set."""
        deadline, queue = self.t0 + seconds, []
        while not stop.is_set():
            tried = {r["kind"] for r in self.records}
            if time.time() >= deadline and not (require_all and set(KINDS) - tried):
                break
            if not queue:
                queue = list(KINDS)
                self.rng.shuffle(queue)
            kind = queue.pop(0)
            if time.time() >= deadline and kind in tried:
                continue  # overtime: only the kinds still missing
            self.inject(kind)
            stop.wait(self.rng.uniform(0.5, 2.0))

    def inject(self, kind):
        start = time.time()
        fault = getattr(self, kind)()
        record = {"kind": kind, "target": fault.get("target"), "start": round(start - self.t0, 2)}
        if "skipped" in fault:
            record["skipped"] = fault["skipped"]
            lib.log(f"fault {kind}: skipped: {fault['skipped']}")
        else:
            lib.log(f"fault {kind} on {fault['target']} for {fault['seconds']:.1f} s "
                    f"{fault.get('detail', '')}")
            try:
                time.sleep(fault["seconds"])
            finally:
                fault["heal"]()
            record["detail"] = fault.get("detail", "")
        record["end"] = round(time.time() - self.t0, 2)
        self.records.append(record)

    def summary(self):
        counts = {k: 0 for k in KINDS}
        for r in self.records:
            if "skipped" not in r:
                counts[r["kind"]] += 1
        skipped = {r["kind"]: r["skipped"] for r in self.records if "skipped" in r}
        return {"counts": counts, "skipped": skipped, "list": self.records}

    # Targets.

    def leader(self):
        """The leading controller; waits (bounded) for one after a failover, else the first."""
        deadline = time.time() + 15
        while time.time() < deadline:
            leader = self.cluster.leader()
            if leader:
                return leader
            time.sleep(0.1)
        return self.cluster.controllers[0]

    def standby(self, leader):
        return next(c for c in self.cluster.controllers if c != leader)

    def pick(self, roles):
        """A node by role: "leader", "standby", "agent" or "etcd"."""
        role = self.rng.choice(roles)
        if role in ("leader", "standby"):
            leader = self.leader()
            return leader if role == "leader" else self.standby(leader)
        return self.rng.choice(self.cluster.agents if role == "agent" else self.cluster.etcd)

    def ips(self, nodes):
        return [self.cluster.ip(n) for n in nodes]

    # Partitions (iptables DROP inside the target's namespace; healing flushes its rules).

    def partition(self, node, peers, direction, seconds, detail):
        self.net.drop(node, self.ips(peers), direction)
        return {"target": node, "seconds": seconds, "detail": detail,
                "heal": lambda: self.net.heal(node)}

    def partition_leader_etcd(self):
        leader = self.leader()
        return self.partition(leader, self.cluster.etcd, "both", self.rng.uniform(3, 9),
                              "leader <-> etcd")

    def partition_leader_agents(self):
        leader = self.leader()
        return self.partition(leader, self.cluster.agents, "both", self.rng.uniform(3, 9),
                              "leader <-> agents")

    def partition_agent(self):
        agent = self.rng.choice(self.cluster.agents)
        others = [n for n in self.cluster.nodes() if n != agent]
        return self.partition(agent, others, "both", self.rng.uniform(3, 9),
                              "agent <-> everything")

    def partition_etcd_minority(self):
        member = self.rng.choice(self.cluster.etcd)
        others = [n for n in self.cluster.etcd + self.cluster.controllers if n != member]
        return self.partition(member, others, "both", self.rng.uniform(3, 9),
                              "etcd member <-> other members and controllers")

    def asymmetric(self):
        """One direction only: the target hears but is not heard ("out"), or the reverse."""
        direction = self.rng.choice(["in", "out"])
        shape = self.rng.choice(["leader-etcd", "leader-agents", "agent-all"])
        if shape == "agent-all":
            node = self.rng.choice(self.cluster.agents)
            peers = [n for n in self.cluster.nodes() if n != node]
        else:
            node = self.leader()
            peers = self.cluster.etcd if shape == "leader-etcd" else self.cluster.agents
        return self.partition(node, peers, direction, self.rng.uniform(3, 8),
                              f"{shape}: {node} drops what comes {direction}")

    # Delay, loss, reordering.

    def netem(self):
        node = self.pick(["leader", "agent", "etcd"])
        delay, loss = self.rng.randint(50, 400), self.rng.choice([0, 1, 5, 10])
        jitter = delay // 2
        detail = f"delay {delay}±{jitter} ms, loss {loss} %, reorder 25 %"
        if self.netem_in_kernel:
            self.net.netem(node, ["delay", f"{delay}ms", f"{jitter}ms", "loss", f"{loss}%",
                                  "reorder", "25%", "50%"])
            return {"target": node, "seconds": self.rng.uniform(3, 6),
                    "detail": "tc netem: " + detail, "heal": lambda: self.net.heal(node)}
        return self.user_space_netem(node, delay, jitter, loss, detail)

    def user_space_netem(self, node, delay, jitter, loss, detail):
        """The kernel lacks sch_netem: the same through NFQUEUE and nfqueue_netem.py."""
        queue = 10 + sorted(self.cluster.nodes()).index(node)
        helper = self.procs.spawn(self.net.exec_argv(node, [
            sys.executable, NFQUEUE_HELPER, "--queue", str(queue), "--delay-ms", str(delay),
            "--jitter-ms", str(jitter), "--loss", str(loss / 100), "--reorder", "0.25",
            "--seed", str(self.rng.randrange(1 << 30))]), f"{self.logs}/netem.{node}.log")
        self.net.queue(node, queue)

        def heal():
            self.net.heal(node)  # no packet goes to the queue any more; then release the held
            lib.stop_processes([helper], 5)
        return {"target": node, "seconds": self.rng.uniform(3, 6),
                "detail": "nfqueue (no sch_netem in this kernel): " + detail, "heal": heal}

    # Processes.

    def pause(self):
        node = self.pick(["leader", "leader", "standby", "agent", "etcd"])
        lease = self.lease["agent" if node in self.cluster.agents else "leader"]
        pid = self.cluster.pid(node)
        os.kill(pid, signal.SIGSTOP)

        def heal():
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        return {"target": node, "seconds": self.rng.uniform(lease + 1, lease + 4),
                "detail": f"SIGSTOP past the {lease} s lease, then SIGCONT", "heal": heal}

    def kill(self):
        node = self.pick(["leader", "leader", "standby", "agent", "agent", "etcd"])
        return self.kill_and_restart(node, None, self.rng.uniform(0.5, 3),
                                     "SIGKILL, restarted with its state")

    def clock(self):
        if self.timens_why:
            return {"target": None, "skipped": self.timens_why}
        node = self.pick(["leader", "standby"])
        offset = self.rng.choice([1, -1]) * self.rng.randint(60, 3600)
        with open("/proc/uptime") as f:
            if offset + float(f.read().split()[0]) < 60:
                offset = -offset  # the kernel refuses a clock shifted below zero
        return self.kill_and_restart(node, offset, self.rng.uniform(0.5, 2),
                                     f"SIGKILL, restarted with its monotonic and boot clocks "
                                     f"shifted {offset:+d} s (time namespace)")

    def kill_and_restart(self, node, clock_offset, seconds, detail):
        self.cluster.hold_down(node)
        return {"target": node, "seconds": seconds, "detail": detail,
                "heal": lambda: self.cluster.restart(node, clock_offset)}
