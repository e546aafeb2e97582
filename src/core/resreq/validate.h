// Validate: the meaning checks of a parsed request against a cluster's resources (R-RR-5).
//
// Purpose: a request that names a resource the cluster does not have, or asks for a shared
// resource as if hosts had it, is rejected at submission with a message saying what is wrong
// and how to fix it — never discovered later as a silent pend. The syntax checks (negative
// and duplicate rusage entries, ptile < 1, hosts != 1) are the parser's; Validate repeats the
// ones a hand-built Request could violate.
//
// Checks, in order, for each alternative and part (the first failure is returned, so the
// result is deterministic):
//  0. the request has at least one alternative and every alternative at least one part;
//  1. count >= 0, and >= 1 when the compound has several parts;
//  2. rusage: sorted and unique, amounts finite and >= 0, `slots` not reserved (tasks take
//     slots), every resource is a host resource or a shared resource, and not both;
//  3. select: no name is a shared resource, nor `max<shared>` (hosts do not have them);
//  4. order: no key is a shared resource;
//  5. same: not a shared resource;
//  6. span: ptile >= 1 for kPtile.
// Errors are kInvalidArgument; messages are lowercase, name the section (and the alternative
// and part when there are several), e.g.
// `part 2: rusage: unknown resource 'gpus'; known resources: gpu, lic, mem`.
// Names in select that are not resources are not errors: they may be attributes, tags or
// LSF-style words (`type==linux`).
// Thread-safety: pure functions.
// Implements the semantic part of R-RR-5.
#pragma once

#include <set>
#include <string>

#include "base/status.h"
#include "core/resreq/expr.h"
#include "core/resreq/request.h"

namespace sluice::core::resreq {

// The resource names a request may use (core::ResourceCatalogOf builds it from a cluster's
// configuration, core/model/request_catalog.h).
struct ResourceCatalog {
  std::set<std::string> host_resources;    // consumables some host has; "slots" is implied
  std::set<std::string> shared_resources;  // cluster-wide consumables (licenses)
};

Status Validate(const Request& request, const ExprPool& pool, const ResourceCatalog& catalog);

}  // namespace sluice::core::resreq
