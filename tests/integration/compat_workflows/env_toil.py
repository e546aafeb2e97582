# A toil job that reports what the batch system gave it: OMP_NUM_THREADS (toil's slurm
# batch system exports it with --export=ALL,OMP_NUM_THREADS=1) and COMPAT_CALLER (set by the
# test in the caller's environment; LSF copies the caller's environment to the job).
import os
from toil.common import Toil
from toil.job import Job

def report(job):
    return "OMP_NUM_THREADS=%s COMPAT_CALLER=%s" % (
        os.environ.get("OMP_NUM_THREADS"), os.environ.get("COMPAT_CALLER"))

if __name__ == "__main__":
    options = Job.Runner.getDefaultArgumentParser().parse_args()
    with Toil(options) as t:
        print("RESULT:", t.start(Job.wrapJobFn(report, cores=1, memory="100M", disk="10M")))
