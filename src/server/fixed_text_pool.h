// SharedFixedText: one copy of a listing's fixed members (wire::FixedJobText) per distinct
// text, shared by every job that has it (issue 45). Jobs of one array, or of one script
// submitted many times, list the same name, command, directory and request: at 200,000
// pending jobs of a few shapes each record held its own 264-byte text (~370 B with its
// allocations). Making the text when listing instead cost ~7 us a job (parse the spec, build,
// dump: 1.4 s more CPU for a listing of 200,000), so it is kept, once per text.
//
// Representation: a process-wide map from text to the shared copy (weakly held); the last
// job to drop a copy removes its entry (the copy's deleter), so the map holds only texts in
// use.
// Thread-safety: the pool has its own mutex; a copy may be dropped on any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <memory>
#include <string>

namespace sluice::server {

// wire::FixedJobText(spec), the copy already held when another job has the same text.
std::shared_ptr<const std::string> SharedFixedText(const nlohmann::json& spec);

// How many distinct texts are held (tests; a diagnostic).
size_t SharedFixedTextCount();

}  // namespace sluice::server
