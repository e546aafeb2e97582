// This machine's time zone name, for the recurrences of `sluice rsv --recur` and of the
// LSF and Slurm reservation commands (R-RSV-1): $TZ (without a leading ':'), else the zoneinfo
// file /etc/localtime links to (`Europe/Berlin`); "" when neither says.
// Thread-safety: reads the environment and the file system; main-thread only.
#pragma once

#include <string>

namespace sluice::cli {

std::string LocalZoneName();

}  // namespace sluice::cli
