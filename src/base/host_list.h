// Host names written short, as Slurm and LSF users read them: "n1,n2,n3,m07" -> "m07,n[1-3]".
// One formatter for every place that shows a set of hosts (the clients' tables, the core's
// pending reasons), so a reservation on h[1-8] reads the same in `rsv list` and `jobs -p`.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

namespace sluice {

// The hosts grouped by their name without its trailing number, the numbers (keeping their
// zero padding) sorted, repeats dropped and runs written A-B; names without a number stay as
// they are. Groups are in name order, so the text does not depend on the order of `hosts`.
std::string CompressHostList(const std::vector<std::string>& hosts);

}  // namespace sluice
