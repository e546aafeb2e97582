# Each rank passes its number to the next one around a ring and all ranks add theirs up; every
# rank prints what it received, the total (0+1+2+3 = 6 for 4 ranks) and the control group it
# runs in, so a test sees that the ranks really talked to each other across the hosts and ran
# inside the job's containment on each.
from mpi4py import MPI

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
received = world.sendrecv(rank, dest=(rank + 1) % size, source=(rank - 1) % size)
total = world.allreduce(rank)
with open("/proc/self/cgroup") as groups:
    # cgroup v2's single line ("0::/path"), else v1's memory hierarchy.
    lines = groups.read().splitlines()
    path = next((l.split(":", 2)[2] for l in lines if l.startswith("0::")), "")
    path = next((l.split(":", 2)[2] for l in lines if ":memory:" in l), path)
print(f"rank {rank}/{size} received={received} sum={total} cgroup={path}", flush=True)
