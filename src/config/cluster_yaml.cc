#include "config/cluster_yaml.h"
