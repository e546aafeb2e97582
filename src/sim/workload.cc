#include "sim/workload.h"
