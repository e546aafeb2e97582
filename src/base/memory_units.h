// Memory unit letters as LSF and Slurm write sizes (K, M, G, T, any case), in megabytes: the
// one table behind the compat commands' -M/--mem and the YAML's GPU memory.
#pragma once

namespace sluice {

// Megabytes per unit letter; 0 for a letter that is not a unit.
constexpr double MegabytesPerUnit(char letter) {
  switch (letter) {
    case 'K':
    case 'k':
      return 1.0 / 1024;
    case 'M':
    case 'm':
      return 1;
    case 'G':
    case 'g':
      return 1024;
    case 'T':
    case 't':
      return 1024.0 * 1024;
    default:
      return 0;
  }
}

}  // namespace sluice
