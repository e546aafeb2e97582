// The job objects of GET /v1/jobs are the wire layer's (wire/job_json.h); these are the
// server's names for them, so the controller's parts read as before.
#pragma once

#include "wire/job_json.h"

namespace sluice::server {

using wire::AppendJobText;
using wire::AppendJsonString;
using wire::FixedJobText;
using wire::JobFieldNames;
using wire::JobFields;
using wire::JobListEntry;

}  // namespace sluice::server
