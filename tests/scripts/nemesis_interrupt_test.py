#!/usr/bin/env python3
"""scripts/nemesis interrupted (issue 44): once its cluster is up and faults run, a SIGINT
stops everything it started and removes every namespace, link and the bridge it made.

Needs what the nemesis needs (root, `ip netns`, etcd); exits 77 (skipped) without it. Waits on
conditions, bounded: the first fault (up to 8 minutes: a busy machine, or another nemesis run
holding the machine's lock), then the script's exit. ctest runs it apart from nemesis_short
(RESOURCE_LOCK): both use the same names.
"""
import os
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP = 77


def namespaces():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith("nms-")]


def links():
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return [line.split(":")[1].strip() for line in out.splitlines()
            if line.split(":")[1].strip().startswith("nms-")]


def processes_under(directory):
    """Pids whose command line names `directory` (the run's temporary directory)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if directory.encode() in f.read():
                    pids.append(int(pid))
        except OSError:
            continue
    return pids


def main():
    env = dict(os.environ, KEEP="1")
    nemesis = subprocess.Popen(
        [sys.executable, f"{ROOT}/scripts/nemesis", "--duration", "600", "--seed", "3"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    lines, up, deadline = [], False, time.time() + 480  # a busy machine's start, a lock
    reader = threading.Thread(target=lambda: lines.extend(iter(nemesis.stderr.readline, "")),
                              daemon=True)
    reader.start()
    while time.time() < deadline and nemesis.poll() is None:
        if any("fault " in line for line in list(lines)):
            up = True
            break
        time.sleep(0.2)
    if nemesis.poll() is not None:
        reader.join(10)
        rest = []
        if nemesis.returncode == SKIP:
            print("skipped: " + " ".join(lines + rest)[-300:])
            return SKIP
        print("the nemesis ended before its first fault:\n" + "\n".join((lines + rest)[-30:]))
        return 1
    if not up:
        nemesis.kill()
        print("no fault within the wait:\n" + "\n".join(lines[-30:]))
        return 1
    nemesis.send_signal(signal.SIGINT)
    try:
        nemesis.wait(timeout=120)
    except subprocess.TimeoutExpired:
        nemesis.kill()
        print("the nemesis did not exit within 120 s of SIGINT")
        return 1
    reader.join(10)
    err = "\n".join(lines)
    directory = next((w for line in lines for w in line.split()
                      if w.startswith("/tmp/nemesis.")), None)
    failures = []
    if namespaces():
        failures.append(f"namespaces left: {namespaces()}")
    if links():
        failures.append(f"links left: {links()}")
    if directory and processes_under(directory):
        failures.append(f"processes left: {processes_under(directory)}")
    if directory:
        subprocess.run(["rm", "-rf", directory])
    if failures:
        print("\n".join(failures) + "\n" + err[-2000:])
        return 1
    print(f"interrupted after its first fault; exit {nemesis.returncode}; nothing left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
