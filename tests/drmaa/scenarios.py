#!/usr/bin/python3
"""DRMAA scenarios driven through Debian's python3-drmaa, one per run: `scenarios.py NAME
[ARGS]`. The library is DRMAA_LIBRARY_PATH (libsluice-drmaa), the controller SLUICE_SERVER and
SLUICE_TOKEN. Each prints one JSON object of what it observed; tests/integration/drmaa_test.cc
checks it. Waits are DRMAA's own (wait, synchronize) or bounded polls, never fixed sleeps."""

import json
import os
import sys
import time

import drmaa
from drmaa.const import SUBMISSION_STATE_HOLD


def poll(condition, timeout=60):
    """Polls `condition` until it holds or `timeout` seconds passed; its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def job_info(info):
    return {"job_id": info.jobId, "exited": info.hasExited, "exit_status": info.exitStatus,
            "signaled": info.hasSignal, "signal": info.terminatedSignal,
            "aborted": info.wasAborted, "rusage": sorted(info.resourceUsage)}


def template(s, *argv):
    jt = s.createJobTemplate()
    jt.remoteCommand = "/bin/sh"
    jt.args = list(argv)
    return jt


def exit3(s):
    """/bin/sh -c 'exit 3': exited with status 3."""
    jt = template(s, "-c", "exit 3")
    job = s.runJob(jt)
    return job_info(s.wait(job, drmaa.Session.TIMEOUT_WAIT_FOREVER))


def bulk(s, out_dir):
    """Five elements with the index placeholder in their output path."""
    jt = template(s, "-c", "echo element $SLUICE_ARRAY_INDEX")
    jt.outputPath = ":" + os.path.join(out_dir, "out.$drmaa_incr_ph$")
    jt.joinFiles = True
    ids = s.runBulkJobs(jt, 1, 5, 1)
    s.synchronize([drmaa.Session.JOB_IDS_SESSION_ALL], drmaa.Session.TIMEOUT_WAIT_FOREVER, True)
    return {"ids": ids}


def terminate(s):
    """One job terminated while it runs (signalled), one while held (aborted)."""
    running = s.runJob(template(s, "-c", "sleep 300"))
    held_jt = template(s, "-c", "exit 0")
    held_jt.jobSubmissionState = SUBMISSION_STATE_HOLD
    held = s.runJob(held_jt)
    held_state = s.jobStatus(held)
    started = poll(lambda: s.jobStatus(running) == drmaa.JobState.RUNNING)
    s.control(running, drmaa.JobControlAction.TERMINATE)
    s.control(held, drmaa.JobControlAction.TERMINATE)
    return {"started": started, "held_state": held_state,
            "running": job_info(s.wait(running, 120)), "held": job_info(s.wait(held, 120)),
            "failed_state": s.jobStatus(running)}


def unknown(s):
    """A job id the controller does not know, and one that is not a job id."""
    seen = {}
    for name, call in [("job_ps", lambda: s.jobStatus("999999")),
                       ("wait", lambda: s.wait("999999", 0)),
                       ("control", lambda: s.control("999999", drmaa.JobControlAction.HOLD)),
                       ("malformed", lambda: s.jobStatus("not-a-job"))]:
        try:
            call()
            seen[name] = "no error"
        except drmaa.errors.DrmaaException as e:
            seen[name] = type(e).__name__
    return seen


def hold_release(s):
    """Submitted held: on hold until released, then runs to its end."""
    jt = template(s, "-c", "exit 0")
    jt.jobSubmissionState = SUBMISSION_STATE_HOLD
    job = s.runJob(jt)
    held = s.jobStatus(job)
    try:
        s.control(job, drmaa.JobControlAction.RELEASE)
        s.control(job, drmaa.JobControlAction.RELEASE)
        second = "no error"
    except drmaa.errors.DrmaaException as e:
        second = type(e).__name__
    info = job_info(s.wait(job, drmaa.Session.TIMEOUT_WAIT_FOREVER))
    try:
        s.synchronize([job], 0, True)
        reaped = "no error"
    except drmaa.errors.DrmaaException as e:
        reaped = type(e).__name__
    return {"held": held, "second_release": second, "info": info,
            "synchronize_reaped": reaped}


def environment(s, out_file):
    """drmaa_v_env reaches the job; the submitting process's own variables do not."""
    os.environ["DRMAA_TEST_SUBMITTER_ONLY"] = "leaked"
    jt = template(s, "-c", 'echo "v=$DRMAA_TEST_VAR s=${DRMAA_TEST_SUBMITTER_ONLY:-}"')
    jt.jobEnvironment = {"DRMAA_TEST_VAR": "hello world"}
    jt.outputPath = ":" + out_file
    job = s.runJob(jt)
    return job_info(s.wait(job, drmaa.Session.TIMEOUT_WAIT_FOREVER))


def native(s):
    """-n 2 -R and a name through the native specification; a bad one is refused at set."""
    jt = template(s, "-c", "exit 0")
    jt.nativeSpecification = "-n 2 -J drmaa-native"
    jt.jobCategory = "normal"
    job = s.runJob(jt)
    s.wait(job, drmaa.Session.TIMEOUT_WAIT_FOREVER)
    seen = {"job_id": job}
    for name, text in [("bad_tasks", "-n x"), ("array", "--array 1-5")]:
        try:
            jt.nativeSpecification = text
            seen[name] = "no error"
        except drmaa.errors.DrmaaException as e:
            seen[name] = [type(e).__name__, str(e)]
    return seen


def timeout(s):
    """wait and synchronize give up at their timeout on a job that keeps running."""
    job = s.runJob(template(s, "-c", "sleep 300"))
    seen = {}
    for name, call in [("wait", lambda: s.wait(job, 0)),
                       ("wait_1s", lambda: s.wait(job, 1)),
                       ("synchronize", lambda: s.synchronize([job], 0, False)),
                       ("negative", lambda: s.wait(job, -5))]:
        try:
            call()
            seen[name] = "no error"
        except drmaa.errors.DrmaaException as e:
            seen[name] = type(e).__name__
    s.control(job, drmaa.JobControlAction.TERMINATE)
    return seen


def wait_any(s):
    """JOB_IDS_SESSION_ANY reaps the session's jobs one at a time, then names none."""
    jobs = {s.runJob(template(s, "-c", "exit %d" % code)) for code in (4, 5)}
    seen = [s.wait(drmaa.Session.JOB_IDS_SESSION_ANY, 120).jobId for _ in jobs]
    try:
        s.wait(drmaa.Session.JOB_IDS_SESSION_ANY, 0)
        third = "no error"
    except drmaa.errors.DrmaaException as e:
        third = type(e).__name__
    return {"submitted": sorted(jobs), "reaped": sorted(seen), "third": third}


def exit_wakes_waiter(s):
    """drmaa_exit in one thread ends a wait in another; a new session can end the job."""
    import threading
    job = s.runJob(template(s, "-c", "sleep 300"))
    seen = {}

    def wait():
        try:
            s.wait(job, drmaa.Session.TIMEOUT_WAIT_FOREVER)
            seen["waiter"] = "no error"
        except drmaa.errors.DrmaaException as e:
            seen["waiter"] = type(e).__name__

    waiter = threading.Thread(target=wait)
    waiter.start()
    poll(lambda: s.jobStatus(job) == drmaa.JobState.RUNNING)
    s.exit()
    waiter.join(60)
    seen["waiter_ended"] = not waiter.is_alive()
    s.initialize()
    s.control(job, drmaa.JobControlAction.TERMINATE)
    seen["after"] = job_info(s.wait(job, 120))
    return seen


SCENARIOS = {"exit3": exit3, "bulk": bulk, "terminate": terminate, "unknown": unknown,
             "hold_release": hold_release, "environment": environment, "native": native,
             "timeout": timeout, "wait_any": wait_any, "exit_wakes_waiter": exit_wakes_waiter}


def main():
    with drmaa.Session() as s:
        result = SCENARIOS[sys.argv[1]](s, *sys.argv[2:])
    print(json.dumps(result))


if __name__ == "__main__":
    main()
