#!/usr/bin/env python3
"""Tests of scripts/lib/nemesis_check.py (issue 44): hand-made histories, each breaking one
property of R-FAULT-1, must be reported; a clean history reports zeros.

  python3 tests/scripts/nemesis_check_test.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..",
                                "scripts", "lib"))
import nemesis_check  # noqa: E402

T0 = 1_700_000_000.0  # a wall-clock second; every time below is T0 + offset


class History:
    """Builds the checker's three inputs: acknowledgements, job log lines, /healthz samples."""

    def __init__(self):
        self.acks, self.lines, self.samples, self.losses = [], [], [], []

    def ack(self, job, serial=None, at=0.0):
        self.acks.append({"serial": job if serial is None else serial, "id": job,
                          "time": T0 + at})
        return self

    def run(self, job, token, start, seconds, host="h1", epoch=5, serial=None, ends=True):
        """Lines of one run: start, a tick every 0.5 s while it lasts, end if `ends`."""
        epoch_field = "-" if epoch is None else str(epoch)
        self.lines.append(f"start {job} {token} {T0 + start:.6f} "
                          f"{job if serial is None else serial} {host} {epoch_field}")
        t = start + 0.5
        while t <= start + seconds:
            self.lines.append(f"tick {job} {token} {T0 + t:.6f}")
            t += 0.5
        if ends:
            self.lines.append(f"end {job} {token} {T0 + start + seconds:.6f}")
        return self

    def health(self, controller, at, role, epoch=0, writable=True, took=0.01):
        self.samples.append({"controller": controller, "sent": T0 + at,
                             "received": T0 + at + took, "role": role,
                             "epoch": epoch if role == "leader" else 0,
                             "writable": role == "leader" and writable})
        return self

    def leader_for(self, controller, begin, end, epoch, other):
        """`controller` leads [begin, end) with `epoch`, `other` stands by; samples every 0.25 s."""
        t = begin
        while t < end:
            self.health(controller, t, "leader", epoch)
            self.health(other, t, "standby")
            t += 0.25
        return self

    def host_lost(self, job, host, at):
        """The controller requeued `job` at `at` because `host` was lost."""
        self.losses.append({"id": job, "host": host, "time": T0 + at})
        return self

    def check(self):
        return nemesis_check.check(self.acks, self.lines, self.samples,
                                   host_losses=self.losses)


def clean_history():
    """Three jobs, one rerun after its first run was killed (never completed, no overlap), a
    failover from c0 (epoch 5) to c1 (epoch 9) with 2 s without a leader."""
    h = History().ack(1).ack(2, at=0.1).ack(3, at=0.2)
    h.run(1, "a", 1.0, 2.0)
    h.run(2, "b", 1.0, 1.2, host="h2", ends=False)  # killed with its host at ~2.3 s
    h.run(2, "c", 6.0, 1.0, host="h3", epoch=9)  # requeued, run by the new leader
    h.run(3, "d", 7.0, 3.0, host="h2", epoch=9)
    h.leader_for("c0", 0.0, 3.0, 5, "c1")
    h.health("c0", 3.0, None).health("c1", 3.0, "standby")
    h.leader_for("c1", 5.0, 11.0, 9, "c0")
    return h


class CleanHistoryTest(unittest.TestCase):
    def test_reports_zeros(self):
        r = clean_history().check()
        for key in ("lost", "ran_concurrently", "completed_twice", "dual_leader",
                    "duplicate_ids"):
            self.assertEqual(r[key], 0, key)
        self.assertEqual(r["acknowledged"], 3)
        self.assertEqual(r["details"]["jobs_run_more_than_once"], 1)

    def test_measures_the_failover_and_the_unavailability(self):
        r = clean_history().check()
        self.assertEqual(len(r["failovers"]), 1)
        f = r["details"]["failovers"][0]
        self.assertEqual((f["from_epoch"], f["to_epoch"]), (5, 9))
        self.assertAlmostEqual(f["seconds"], 2.25, places=2)  # 2.76 (last of 5) -> 5.01
        self.assertAlmostEqual(r["max_unavailable_seconds"], 2.25, places=2)

    def test_a_standby_without_a_leader_is_not_a_dual_leader(self):
        h = clean_history()
        h.health("c0", 4.0, "standby").health("c1", 4.0, "standby")
        self.assertEqual(h.check()["dual_leader"], 0)


class BrokenHistoryTest(unittest.TestCase):
    def test_a_job_completed_twice(self):
        h = clean_history().run(1, "e", 8.0, 1.0, host="h3", epoch=9)
        r = h.check()
        self.assertEqual(r["completed_twice"], 1)
        self.assertEqual(r["details"]["completed_twice"][0]["id"], 1)
        self.assertEqual(r["ran_concurrently"], 0)

    def test_a_rerun_after_its_host_was_lost_is_reported_apart(self):
        # Job 1 ended on h1 at 3.0 s in a partition; h1 was declared lost at 3.5 s with it;
        # the requeued job ran again on h3 at 8.0 s.
        h = clean_history().run(1, "e", 8.0, 1.0, host="h3", epoch=9).host_lost(1, "h1", 3.5)
        r = h.check()
        self.assertEqual(r["completed_twice"], 0)
        self.assertEqual(r["rerun_after_host_loss"], 1)
        self.assertEqual(r["details"]["rerun_after_host_loss"][0]["id"], 1)

    def test_a_loss_of_another_host_or_after_the_rerun_explains_nothing(self):
        h = clean_history().run(1, "e", 8.0, 1.0, host="h3", epoch=9)
        h.host_lost(1, "h2", 3.5).host_lost(1, "h1", 8.5)
        r = h.check()
        self.assertEqual(r["completed_twice"], 1)
        self.assertEqual(r["rerun_after_host_loss"], 0)

    def test_a_lost_acknowledged_job(self):
        h = clean_history().ack(4, at=0.3).run(4, "f", 2.0, 1.0, ends=False)
        r = h.check()
        self.assertEqual(r["lost"], 1)
        self.assertEqual(r["details"]["lost"], [4])

    def test_an_acknowledged_job_that_never_ran_is_lost(self):
        r = clean_history().ack(5, at=0.3).check()
        self.assertEqual(r["details"]["lost"], [5])

    def test_two_overlapping_runs(self):
        # Job 3 runs [7, 10] on h2; a second run on h1 from 9.2 overlaps its last ticks.
        h = clean_history().run(3, "g", 9.2, 2.0, host="h1", epoch=9, ends=False)
        r = h.check()
        self.assertEqual(r["ran_concurrently"], 1)
        self.assertEqual(r["details"]["ran_concurrently"][0]["id"], 3)

    def test_a_run_inside_a_longer_one_overlaps(self):
        h = History().ack(1).run(1, "a", 0.0, 5.0).run(1, "b", 1.0, 1.0, host="h2", ends=False)
        h.run(1, "c", 3.0, 0.5, host="h3", ends=False)
        self.assertEqual(h.check()["ran_concurrently"], 1)

    def test_runs_one_after_the_other_do_not_overlap(self):
        h = History().ack(1).run(1, "a", 0.0, 1.0, ends=False).run(1, "b", 1.1, 1.0)
        self.assertEqual(h.check()["ran_concurrently"], 0)

    def test_dual_leader_samples(self):
        # c0 (epoch 5) still claims to lead while c1 leads with epoch 9.
        h = clean_history().health("c0", 6.0, "leader", 5).health("c0", 6.25, "leader", 5)
        r = h.check()
        self.assertEqual(r["dual_leader"], 2)
        claim = r["details"]["stale_leader_claims"][0]
        self.assertEqual((claim["controller"], claim["epoch"], claim["rival_epoch"]),
                         ("c0", 5, 9))

    def test_a_leader_answer_before_the_new_leader_is_not_stale(self):
        # c0's last claim was sent before c1's first claim arrived: a handover, not two leaders.
        h = clean_history().health("c0", 4.99, "leader", 5, took=0.5)
        self.assertEqual(h.check()["dual_leader"], 0)

    def test_overlapping_epochs(self):
        # Epoch 9 launched job 3 at 7.0 on h2; a launch of epoch 5 starts on h1 at 9.0.
        h = clean_history().ack(6, at=0.4).run(6, "h", 9.0, 1.0, host="h1", epoch=5)
        r = h.check()
        self.assertEqual(r["dual_leader"], 1)
        launch = r["details"]["stale_launches"][0]
        self.assertEqual((launch["id"], launch["epoch"], launch["newer_epoch"]), (6, 5, 9))

    def test_an_old_launch_within_the_fence_slack_is_not_stale(self):
        # Started 0.5 s after epoch 9's first run (6.0): in flight when the old lease ran out.
        h = clean_history().ack(6, at=0.4).run(6, "h", 6.5, 1.0, host="h1", epoch=5)
        self.assertEqual(h.check()["dual_leader"], 0)

    def test_runs_without_epochs_are_not_fenced(self):
        h = History().ack(1).ack(2).run(1, "a", 0.0, 1.0, epoch=9)
        h.run(2, "b", 5.0, 1.0, epoch=None)
        r = h.check()
        self.assertEqual(r["dual_leader"], 0)
        self.assertEqual(r["details"]["runs_without_epoch"], 1)

    def test_an_id_acknowledged_for_two_submissions(self):
        r = clean_history().ack(2, serial=17, at=0.5).check()
        self.assertEqual(r["duplicate_ids"], 1)
        self.assertEqual(r["details"]["duplicate_ids"], [{"id": 2, "serials": ["17", "2"]}])

    def test_an_id_run_for_two_submissions(self):
        r = clean_history().run(3, "i", 12.0, 1.0, serial=18, epoch=9).check()
        self.assertEqual(r["duplicate_ids"], 1)

    def test_a_retried_submission_is_not_a_duplicate(self):
        r = clean_history().ack(1, serial=1, at=0.5).check()  # the same serial answered twice
        self.assertEqual(r["duplicate_ids"], 0)
        self.assertEqual(r["acknowledged"], 3)

    def test_malformed_lines_are_counted_not_fatal(self):
        h = clean_history()
        h.lines += ["", "start 7", "tick x y z", "bogus 1 a 2.0"]
        r = h.check()
        self.assertEqual(r["details"]["malformed_lines"], 4)
        self.assertEqual(r["lost"], 0)


if __name__ == "__main__":
    unittest.main()
