// The 36 functions of the DRMAA 1.0 C binding (drmaa.h), the only symbols libsluice-drmaa
// exports (drmaa.map). Each checks its pointers and buffers, calls the session, the job
// template or the pure parts, and turns the outcome into an errno and a diagnosis. No
// exception crosses into the caller: an allocation failure is DRMAA_ERRNO_NO_MEMORY, any other
// exception from a library DRMAA_ERRNO_INTERNAL_ERROR (Sluice's own code throws none).
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "drmaa/c_types.h"
#include "drmaa/drmaa.h"
#include "drmaa/error.h"
#include "drmaa/job_status.h"
#include "drmaa/session.h"

namespace sluice::drmaa {
namespace {

// A DRMAA job id's longest text from drmaa_run_job: 19 digits (an int64), and the NUL.
constexpr size_t kJobIdBuffer = 20;
constexpr unsigned kMajorVersion = 1;
constexpr unsigned kMinorVersion = 0;
constexpr char kDrmSystem[] = "Sluice";
constexpr char kImplementation[] = "libsluice-drmaa 1.0: DRMAA 1.0 over the Sluice REST API v1";

Error NullArgument(const char* name) {
  return Error(DRMAA_ERRNO_INVALID_ARGUMENT, std::string(name) + " is NULL");
}

// Runs `body` (returning Error) and reports it: the errno, and its diagnosis in the buffer.
template <typename Body>
int Report(char* diagnosis, size_t diagnosis_size, Body&& body) {
  Error error;
  try {
    error = body();
  } catch (const std::bad_alloc&) {
    error = Error(DRMAA_ERRNO_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    error = Error(DRMAA_ERRNO_INTERNAL_ERROR, std::string("internal error: ") + e.what());
  } catch (...) {
    error = Error(DRMAA_ERRNO_INTERNAL_ERROR, "internal error");
  }
  WriteTruncated(error.diagnosis(), diagnosis, diagnosis_size);
  return error.code();
}

// drmaa_get_next_*: the next value, when it fits; the vector does not move otherwise.
int NextValue(StringVector* vector, char* value, size_t value_len) {
  if (vector == nullptr || value == nullptr) return DRMAA_ERRNO_INVALID_ARGUMENT;
  if (vector->next >= vector->values.size()) return DRMAA_ERRNO_NO_MORE_ELEMENTS;
  const std::string& next = vector->values[vector->next];
  if (next.size() >= value_len) return DRMAA_ERRNO_INVALID_ARGUMENT;
  std::memcpy(value, next.c_str(), next.size() + 1);
  ++vector->next;
  return DRMAA_ERRNO_SUCCESS;
}

int CountValues(const StringVector* vector, size_t* size) {
  if (vector == nullptr || size == nullptr) return DRMAA_ERRNO_INVALID_ARGUMENT;
  *size = vector->values.size();
  return DRMAA_ERRNO_SUCCESS;
}

// Hands a new string vector of type T to the caller's `*out`.
template <typename T>
Error Hand(T** out, std::vector<std::string> values, const char* name) {
  if (out == nullptr) return NullArgument(name);
  T* vector = new T;
  vector->impl.values = std::move(values);
  *out = vector;
  return Error::None();
}

// A w* function: `*out` = what `read` finds in the stat.
template <typename Read>
int StatFlag(int* out, int stat, char* diagnosis, size_t size, const char* name, Read read) {
  return Report(diagnosis, size, [&] {
    if (out == nullptr) return NullArgument(name);
    *out = read(DecodeStat(stat)) ? 1 : 0;
    return Error::None();
  });
}

}  // namespace
}  // namespace sluice::drmaa

using sluice::drmaa::DecodeStat;
using sluice::drmaa::Error;
using sluice::drmaa::Expected;
using sluice::drmaa::NullArgument;
using sluice::drmaa::ProcessSession;
using sluice::drmaa::Report;
using sluice::drmaa::Session;
using sluice::drmaa::Termination;
using sluice::drmaa::WriteValue;

extern "C" {

// ---- String vectors ----

int drmaa_get_next_attr_name(drmaa_attr_names_t* values, char* value, size_t value_len) {
  return sluice::drmaa::NextValue(values == nullptr ? nullptr : &values->impl, value, value_len);
}

int drmaa_get_next_attr_value(drmaa_attr_values_t* values, char* value, size_t value_len) {
  return sluice::drmaa::NextValue(values == nullptr ? nullptr : &values->impl, value, value_len);
}

int drmaa_get_next_job_id(drmaa_job_ids_t* values, char* value, size_t value_len) {
  return sluice::drmaa::NextValue(values == nullptr ? nullptr : &values->impl, value, value_len);
}

int drmaa_get_num_attr_names(drmaa_attr_names_t* values, size_t* size) {
  return sluice::drmaa::CountValues(values == nullptr ? nullptr : &values->impl, size);
}

int drmaa_get_num_attr_values(drmaa_attr_values_t* values, size_t* size) {
  return sluice::drmaa::CountValues(values == nullptr ? nullptr : &values->impl, size);
}

int drmaa_get_num_job_ids(drmaa_job_ids_t* values, size_t* size) {
  return sluice::drmaa::CountValues(values == nullptr ? nullptr : &values->impl, size);
}

void drmaa_release_attr_names(drmaa_attr_names_t* values) { delete values; }

void drmaa_release_attr_values(drmaa_attr_values_t* values) { delete values; }

void drmaa_release_job_ids(drmaa_job_ids_t* values) { delete values; }

// ---- Session ----

int drmaa_init(const char* contact, char* error_diagnosis, size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len,
                [&] { return ProcessSession().Open(contact == nullptr ? "" : contact); });
}

int drmaa_exit(char* error_diagnosis, size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] { return ProcessSession().Close(); });
}

// ---- Job templates ----

int drmaa_allocate_job_template(drmaa_job_template_t** jt, char* error_diagnosis,
                                size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (jt == nullptr) return NullArgument("jt");
    if (!ProcessSession().active()) {
      return Error(DRMAA_ERRNO_NO_ACTIVE_SESSION, "no active DRMAA session: call drmaa_init first");
    }
    *jt = new drmaa_job_template_t;
    return Error::None();
  });
}

int drmaa_delete_job_template(drmaa_job_template_t* jt, char* error_diagnosis,
                              size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (jt == nullptr) return NullArgument("jt");
    delete jt;
    return Error::None();
  });
}

int drmaa_set_attribute(drmaa_job_template_t* jt, const char* name, const char* value,
                        char* error_diagnosis, size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (jt == nullptr) return NullArgument("jt");
    if (name == nullptr) return NullArgument("name");
    if (value == nullptr) return NullArgument("value (\"\" unsets the attribute)");
    return jt->impl.Set(name, value, static_cast<int64_t>(std::time(nullptr)));
  });
}

int drmaa_get_attribute(drmaa_job_template_t* jt, const char* name, char* value,
                        size_t value_len, char* error_diagnosis, size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (jt == nullptr) return NullArgument("jt");
    if (name == nullptr) return NullArgument("name");
    Expected<std::string> got = jt->impl.Get(name);
    if (!got) return got.error();
    return WriteValue(*got, value, value_len, name);
  });
}

int drmaa_set_vector_attribute(drmaa_job_template_t* jt, const char* name, const char* value[],
                               char* error_diagnosis, size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (jt == nullptr) return NullArgument("jt");
    if (name == nullptr) return NullArgument("name");
    if (value == nullptr) return NullArgument("value (an array ending with NULL)");
    std::vector<std::string> values;
    for (const char** v = value; *v != nullptr; ++v) values.emplace_back(*v);
    return jt->impl.SetVector(name, std::move(values));
  });
}

int drmaa_get_vector_attribute(drmaa_job_template_t* jt, const char* name,
                               drmaa_attr_values_t** values, char* error_diagnosis,
                               size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (jt == nullptr) return NullArgument("jt");
    if (name == nullptr) return NullArgument("name");
    if (values == nullptr) return NullArgument("values");
    Expected<std::vector<std::string>> got = jt->impl.GetVector(name);
    if (!got) return got.error();
    return sluice::drmaa::Hand(values, std::move(*got), "values");
  });
}

int drmaa_get_attribute_names(drmaa_attr_names_t** values, char* error_diagnosis,
                              size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    return sluice::drmaa::Hand(values, sluice::drmaa::SupportedAttributeNames(false), "values");
  });
}

int drmaa_get_vector_attribute_names(drmaa_attr_names_t** values, char* error_diagnosis,
                                     size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    return sluice::drmaa::Hand(values, sluice::drmaa::SupportedAttributeNames(true), "values");
  });
}

// ---- Submission ----

int drmaa_run_job(char* job_id, size_t job_id_len, const drmaa_job_template_t* jt,
                  char* error_diagnosis, size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (jt == nullptr) return NullArgument("jt");
    if (job_id == nullptr) return NullArgument("job_id");
    // Checked before submitting: a job whose id cannot be returned could not be waited for.
    if (job_id_len < sluice::drmaa::kJobIdBuffer) {
      return Error(DRMAA_ERRNO_INVALID_ARGUMENT,
                   "job_id: a buffer of " + std::to_string(job_id_len) + " bytes; expected at least " +
                       std::to_string(sluice::drmaa::kJobIdBuffer) + " (DRMAA_JOBNAME_BUFFER)");
    }
    Expected<std::string> id = ProcessSession().RunJob(jt->impl.Values());
    if (!id) return id.error();
    return WriteValue(*id, job_id, job_id_len, "job_id");
  });
}

int drmaa_run_bulk_jobs(drmaa_job_ids_t** jobids, const drmaa_job_template_t* jt, int start,
                        int end, int incr, char* error_diagnosis, size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (jobids == nullptr) return NullArgument("jobids");
    if (jt == nullptr) return NullArgument("jt");
    Expected<std::vector<std::string>> ids = ProcessSession().RunBulkJobs(
        jt->impl.Values(), sluice::drmaa::BulkRange{.start = start, .end = end, .incr = incr});
    if (!ids) return ids.error();
    return sluice::drmaa::Hand(jobids, std::move(*ids), "jobids");
  });
}

// ---- Control, synchronization, status ----

int drmaa_control(const char* jobid, int action, char* error_diagnosis, size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (jobid == nullptr) return NullArgument("jobid");
    return ProcessSession().Control(jobid, action);
  });
}

int drmaa_synchronize(const char* job_ids[], signed long timeout, int dispose,
                      char* error_diagnosis, size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (job_ids == nullptr) return NullArgument("job_ids (an array ending with NULL)");
    std::vector<std::string> ids;
    for (const char** id = job_ids; *id != nullptr; ++id) ids.emplace_back(*id);
    return ProcessSession().Synchronize(ids, timeout, dispose != 0);
  });
}

int drmaa_wait(const char* job_id, char* job_id_out, size_t job_id_out_len, int* stat,
               signed long timeout, drmaa_attr_values_t** rusage, char* error_diagnosis,
               size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (job_id == nullptr) return NullArgument("job_id");
    if (stat == nullptr) return NullArgument("stat");
    const size_t capacity = job_id_out == nullptr ? SIZE_MAX : job_id_out_len;
    Expected<Session::Waited> waited = ProcessSession().Wait(job_id, timeout, capacity);
    if (!waited) return waited.error();
    if (job_id_out != nullptr) {
      SLUICE_DRMAA_RETURN_IF_ERROR(
          WriteValue(waited->job_id, job_id_out, job_id_out_len, "job_id_out"));
    }
    *stat = waited->stat;
    if (rusage == nullptr) return Error::None();
    return sluice::drmaa::Hand(rusage, std::move(waited->rusage), "rusage");
  });
}

int drmaa_wifexited(int* exited, int stat, char* error_diagnosis, size_t error_diag_len) {
  return sluice::drmaa::StatFlag(exited, stat, error_diagnosis, error_diag_len, "exited",
                                 [](const Termination& t) { return t.exited; });
}

int drmaa_wexitstatus(int* exit_status, int stat, char* error_diagnosis, size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (exit_status == nullptr) return NullArgument("exit_status");
    const Termination t = DecodeStat(stat);
    *exit_status = t.exited ? t.exit_code : 0;
    return Error::None();
  });
}

int drmaa_wifsignaled(int* signaled, int stat, char* error_diagnosis, size_t error_diag_len) {
  return sluice::drmaa::StatFlag(signaled, stat, error_diagnosis, error_diag_len, "signaled",
                                 [](const Termination& t) { return t.signalled; });
}

int drmaa_wtermsig(char* signal, size_t signal_len, int stat, char* error_diagnosis,
                   size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    const Termination t = DecodeStat(stat);
    return WriteValue(t.signalled ? sluice::drmaa::SignalName(t.signal) : "", signal,
                      signal_len, "signal");
  });
}

int drmaa_wcoredump(int* core_dumped, int stat, char* error_diagnosis, size_t error_diag_len) {
  return sluice::drmaa::StatFlag(core_dumped, stat, error_diagnosis, error_diag_len,
                                 "core_dumped", [](const Termination& t) { return t.core_dumped; });
}

int drmaa_wifaborted(int* aborted, int stat, char* error_diagnosis, size_t error_diag_len) {
  return sluice::drmaa::StatFlag(aborted, stat, error_diagnosis, error_diag_len, "aborted",
                                 [](const Termination& t) { return t.aborted; });
}

int drmaa_job_ps(const char* job_id, int* remote_ps, char* error_diagnosis,
                 size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (job_id == nullptr) return NullArgument("job_id");
    if (remote_ps == nullptr) return NullArgument("remote_ps");
    Expected<int> state = ProcessSession().JobState(job_id);
    if (!state) return state.error();
    *remote_ps = *state;
    return Error::None();
  });
}

// ---- Errors and information ----

const char* drmaa_strerror(int drmaa_errno) { return sluice::drmaa::ErrorText(drmaa_errno); }

int drmaa_get_contact(char* contact, size_t contact_len, char* error_diagnosis,
                      size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    return WriteValue(ProcessSession().Contact(), contact, contact_len, "contact");
  });
}

int drmaa_version(unsigned int* major, unsigned int* minor, char* error_diagnosis,
                  size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    if (major == nullptr) return NullArgument("major");
    if (minor == nullptr) return NullArgument("minor");
    *major = sluice::drmaa::kMajorVersion;
    *minor = sluice::drmaa::kMinorVersion;
    return Error::None();
  });
}

int drmaa_get_DRM_system(char* drm_system, size_t drm_system_len, char* error_diagnosis,
                         size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    return WriteValue(sluice::drmaa::kDrmSystem, drm_system, drm_system_len, "drm_system");
  });
}

int drmaa_get_DRMAA_implementation(char* drmaa_impl, size_t drmaa_impl_len,
                                   char* error_diagnosis, size_t error_diag_len) {
  return Report(error_diagnosis, error_diag_len, [&] {
    return WriteValue(sluice::drmaa::kImplementation, drmaa_impl, drmaa_impl_len, "drmaa_impl");
  });
}

}  // extern "C"
