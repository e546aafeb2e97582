#!/usr/bin/env python3
"""scripts/lib/nfqueue_netem.py - delay, jitter, loss and reordering in user space (issue 44).

`tc netem` needs the kernel's sch_netem, which some kernels lack (CONFIG_NET_SCH_NETEM unset).
scripts/nemesis then sends a namespace's packets to an iptables NFQUEUE and runs this helper in
that namespace: it holds each packet for DELAY ± JITTER ms before accepting it (so packets
overtake each other: reordering), accepts a fraction REORDER at once, drops a fraction LOSS.

  python3 nfqueue_netem.py --queue N --delay-ms D --jitter-ms J --loss P --reorder R --seed S

Standard library only: it speaks nfnetlink_queue over a raw netlink socket (the constants are
those of <linux/netfilter/nfnetlink_queue.h>). The queue is bound fail-open and the iptables
rule should say `--queue-bypass`, so packets flow when the queue is full or this helper is gone.
On SIGTERM it accepts every packet it still holds, then exits 0.
"""
import argparse
import errno
import heapq
import random
import select
import signal
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_MASK, NFQA_CFG_FLAGS = 1, 2, 4, 5
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NFQA_CFG_F_FAIL_OPEN = 1
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
NF_DROP, NF_ACCEPT = 0, 1


def attribute(kind, payload):
    """A netlink attribute, padded to 4 bytes."""
    raw = struct.pack("=HH", 4 + len(payload), kind) + payload
    return raw + b"\0" * (-len(raw) % 4)


def message(kind, queue, attributes, flags=NLM_F_REQUEST):
    """An nfnetlink_queue message: nlmsghdr, nfgenmsg (AF_UNSPEC, v0, queue) and attributes."""
    body = struct.pack("=BB", socket.AF_UNSPEC, 0) + struct.pack(">H", queue) + attributes
    header = struct.pack("=IHHII", 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | kind, flags, 0, 0)
    return header + body


def bind(sock, queue):
    """Binds the queue, metadata only (the verdict needs the packet id, not its bytes), fail-open;
    raises OSError with the kernel's error."""
    for attrs in (attribute(NFQA_CFG_CMD, struct.pack(">BBH", NFQNL_CFG_CMD_BIND, 0, 0)),
                  attribute(NFQA_CFG_PARAMS, struct.pack(">IB", 0, NFQNL_COPY_META)),
                  attribute(NFQA_CFG_FLAGS, struct.pack(">I", NFQA_CFG_F_FAIL_OPEN)) +
                  attribute(NFQA_CFG_MASK, struct.pack(">I", NFQA_CFG_F_FAIL_OPEN))):
        sock.send(message(NFQNL_MSG_CONFIG, queue, attrs, NLM_F_REQUEST | NLM_F_ACK))
        reply = sock.recv(65536)
        kind = struct.unpack_from("=H", reply, 4)[0]
        error = struct.unpack_from("=i", reply, 16)[0] if kind == NLMSG_ERROR else 0
        if error:
            raise OSError(-error, "nfqueue bind: " + errno.errorcode.get(-error, "?"))


def packet_ids(data):
    """The packet ids of the NFQNL_MSG_PACKET messages in one datagram."""
    ids, offset = [], 0
    while offset + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, offset)
        if length < 16:
            break
        if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
            at = offset + 20  # nlmsghdr + nfgenmsg
            while at + 4 <= offset + length:
                size, attr = struct.unpack_from("=HH", data, at)
                if size < 4:
                    break
                if attr & 0x3FFF == NFQA_PACKET_HDR:
                    ids.append(struct.unpack_from(">I", data, at + 4)[0])
                at += (size + 3) & ~3
        offset += (length + 3) & ~3
    return ids


def verdict(sock, queue, packet_id, decision):
    sock.send(message(NFQNL_MSG_VERDICT, queue,
                      attribute(NFQA_VERDICT_HDR, struct.pack(">II", decision, packet_id))))


def run(args):
    rng = random.Random(args.seed)
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    bind(sock, args.queue)
    held, stopping, sequence = [], [False], 0  # held: heap of (release time, sequence, id)

    def stop(_signum, _frame):
        stopping[0] = True
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("nfqueue_netem: queue", args.queue, "bound", file=sys.stderr, flush=True)
    while not stopping[0]:
        now = time.monotonic()
        while held and held[0][0] <= now:
            verdict(sock, args.queue, heapq.heappop(held)[2], NF_ACCEPT)
        wait = min(0.2, held[0][0] - now) if held else 0.2
        try:
            ready = select.select([sock], [], [], max(0.0, wait))[0]
            data = sock.recv(65536) if ready else b""
        except InterruptedError:
            continue
        except OSError:  # ENOBUFS: the kernel dropped messages; fail-open keeps traffic flowing
            continue
        for packet in packet_ids(data):
            if rng.random() < args.loss:
                verdict(sock, args.queue, packet, NF_DROP)
            elif rng.random() < args.reorder:
                verdict(sock, args.queue, packet, NF_ACCEPT)
            else:
                delay = max(0.0, args.delay_ms + rng.uniform(-args.jitter_ms, args.jitter_ms))
                sequence += 1
                heapq.heappush(held, (time.monotonic() + delay / 1000, sequence, packet))
    for _, _, packet in held:
        verdict(sock, args.queue, packet, NF_ACCEPT)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queue", type=int, required=True)
    p.add_argument("--delay-ms", type=float, default=100)
    p.add_argument("--jitter-ms", type=float, default=0)
    p.add_argument("--loss", type=float, default=0, help="fraction dropped, 0..1")
    p.add_argument("--reorder", type=float, default=0, help="fraction sent at once, 0..1")
    p.add_argument("--seed", type=int, default=0)
    run(p.parse_args())


if __name__ == "__main__":
    main()
