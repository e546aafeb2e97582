"""scripts/lib/netns.py - a private network of Linux network namespaces on a bridge (issue 44).

    net = netns.Network("nms", "10.77.0")     # bridge nms-br, 10.77.0.1 in the root namespace
    ip = net.add_node("c0")                    # namespace nms-c0, veth nms-c0 <-> eth0, 10.77.0.x
    argv = net.exec_argv("c0", ["sluice", ...])
    net.drop("c0", ["10.77.0.10"], "both")    # iptables DROP inside nms-c0 (a partition)
    net.heal("c0")                             # flushes its iptables rules and its qdisc
    netns.remove_leftovers("nms")              # processes still in the namespaces, namespaces,
                                               # veths, bridge (also of a half-built network)

Every name starts with PREFIX- so that `remove_leftovers(PREFIX)` removes it all, at the end
and what an interrupted run left. The bridge does not call the root namespace's iptables
(nf_call_iptables 0): a host whose FORWARD policy is DROP (Docker's) would otherwise cut the
nodes from each other. Faults are rules inside the nodes' own namespaces, so healing one node
is flushing its tables.
Needs root, iproute2 and iptables. Commands that fail raise subprocess.CalledProcessError.
"""
import os
import shutil
import signal
import subprocess

NODE_DEVICE = "eth0"


def sh(argv, check=True):
    """Runs argv; its stdout. Raises CalledProcessError (with stderr) when `check`."""
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=30)
    if check and r.returncode != 0:
        raise subprocess.CalledProcessError(r.returncode, argv, r.stdout, r.stderr)
    return r.stdout


def unavailable():
    """Why namespaces cannot be used here, or None."""
    if os.geteuid() != 0:
        return "not root: network namespaces, iptables and tc need root"
    for tool in ("ip", "iptables", "tc", "unshare"):
        if not shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin"):
            return f"{tool} not found (install iproute2 iptables)"
    probe = "nmsprobe-" + str(os.getpid())
    try:
        sh(["ip", "netns", "add", probe])
        sh(["ip", "netns", "exec", probe, "iptables", "-S"])
    except (OSError, subprocess.SubprocessError) as e:
        return f"ip netns / iptables unusable: {getattr(e, 'stderr', '') or e}".strip()
    finally:
        sh(["ip", "netns", "del", probe], check=False)
    return None


def netns_pids(namespace):
    out = sh(["ip", "netns", "pids", namespace], check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def kill_namespace_processes(namespace):
    """SIGKILLs what still runs in the namespace (all of it started by the nemesis or by what
    it started: jobs an agent left behind), after SIGCONT for the stopped ones."""
    for pid in netns_pids(namespace):
        for sig in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass


def remove_leftovers(prefix):
    """Removes the namespaces, links and bridge named PREFIX-* (an earlier, interrupted run)."""
    names = sh(["ip", "netns", "list"], check=False).split("\n")
    for ns in (line.split()[0] for line in names if line.strip()):
        if ns.startswith(prefix + "-"):
            kill_namespace_processes(ns)
            sh(["ip", "netns", "del", ns], check=False)
    for line in sh(["ip", "-o", "link", "show"], check=False).splitlines():
        name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        if name.startswith(prefix + "-"):
            sh(["ip", "link", "del", name], check=False)


class Network:
    """The bridge, the nodes' namespaces and their addresses: `base`.1 is the bridge (the
    script itself), nodes get `base`.10 and up in the order they are added."""

    def __init__(self, prefix, base):
        self.prefix, self.base = prefix, base
        self.bridge = f"{prefix}-br"
        self.nodes = {}  # name -> ip
        self.netem_qdisc = set()  # nodes with a tc qdisc to delete on heal
        sh(["ip", "link", "add", self.bridge, "type", "bridge", "nf_call_iptables", "0"])
        sh(["ip", "addr", "add", f"{base}.1/24", "dev", self.bridge])
        sh(["ip", "link", "set", self.bridge, "up"])

    def namespace(self, node):
        return f"{self.prefix}-{node}"

    def add_node(self, node):
        """A namespace with lo and eth0 up, eth0's peer on the bridge; the node's address."""
        ns, host_end = self.namespace(node), f"{self.prefix}-{node}"
        ip = f"{self.base}.{10 + len(self.nodes)}"
        sh(["ip", "netns", "add", ns])
        sh(["ip", "link", "add", host_end, "type", "veth", "peer", "name", NODE_DEVICE,
            "netns", ns])
        sh(["ip", "link", "set", host_end, "master", self.bridge, "up"])
        self.ns_run(node, ["ip", "addr", "add", f"{ip}/24", "dev", NODE_DEVICE])
        self.ns_run(node, ["ip", "link", "set", NODE_DEVICE, "up"])
        self.ns_run(node, ["ip", "link", "set", "lo", "up"])
        self.nodes[node] = ip
        return ip

    def exec_argv(self, node, argv):
        return ["ip", "netns", "exec", self.namespace(node)] + list(argv)

    def ns_run(self, node, argv, check=True):
        return sh(self.exec_argv(node, argv), check)

    def drop(self, node, peers, direction):
        """Drops the node's traffic from ("in"), to ("out") or both ways with each peer IP."""
        for peer in peers:
            if direction in ("in", "both"):
                self.ns_run(node, ["iptables", "-A", "INPUT", "-s", peer, "-j", "DROP"])
            if direction in ("out", "both"):
                self.ns_run(node, ["iptables", "-A", "OUTPUT", "-d", peer, "-j", "DROP"])

    def queue(self, node, number):
        """Sends the node's eth0 traffic, both ways, to NFQUEUE `number` (bypassed when no
        program listens)."""
        for chain, way in (("INPUT", "-i"), ("OUTPUT", "-o")):
            self.ns_run(node, ["iptables", "-A", chain, way, NODE_DEVICE, "-j", "NFQUEUE",
                               "--queue-num", str(number), "--queue-bypass"])

    def netem(self, node, spec):
        """`tc qdisc add dev eth0 root netem SPEC...` in the node (egress)."""
        self.ns_run(node, ["tc", "qdisc", "add", "dev", NODE_DEVICE, "root", "netem"] + spec)
        self.netem_qdisc.add(node)

    def heal(self, node):
        self.ns_run(node, ["iptables", "-F"], check=False)
        if node in self.netem_qdisc:
            self.ns_run(node, ["tc", "qdisc", "del", "dev", NODE_DEVICE, "root"], check=False)
            self.netem_qdisc.discard(node)

    def heal_all(self):
        for node in self.nodes:
            self.heal(node)


def netem_supported(prefix):
    """Whether the kernel has sch_netem (some minimal kernels do not)."""
    probe = f"{prefix}-netemprobe"
    try:
        sh(["ip", "link", "add", probe, "type", "veth", "peer", "name", probe + "p"])
        return subprocess.run(["tc", "qdisc", "add", "dev", probe, "root", "netem", "delay",
                               "1ms"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        sh(["ip", "link", "del", probe], check=False)
