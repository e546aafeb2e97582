# Each rank passes its number to the next one around a ring and all ranks add theirs up; every
# rank prints what it received and the total (0+1+2+3 = 6 for 4 ranks), so a test sees that
# the ranks really talked to each other across the hosts.
from mpi4py import MPI

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
received = world.sendrecv(rank, dest=(rank + 1) % size, source=(rank - 1) % size)
total = world.allreduce(rank)
print(f"rank {rank}/{size} received={received} sum={total}", flush=True)
