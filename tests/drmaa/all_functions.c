/* Calls every one of the 36 functions of the DRMAA 1.0 C binding against a Sluice controller
 * (SLUICE_SERVER, SLUICE_TOKEN), as a C program built against drmaa.h: proof that the header
 * is C and that the library exports them all. Prints "ok FUNCTION" for each call that did
 * what the standard says, "FAIL FUNCTION: why" otherwise; exits 0 only when none failed.
 * Run by tests/integration/drmaa_test.cc. */
#include <stdio.h>
#include <string.h>

#include "drmaa/drmaa.h"

static int failures = 0;
static char diag[DRMAA_ERROR_STRING_BUFFER];

/* Reports one call: `got` is its errno, `want` the errno the standard gives for it. */
static void expect(const char *function, int got, int want) {
  if (got == want) {
    printf("ok %s\n", function);
  } else {
    printf("FAIL %s: errno %d (%s), expected %d; diagnosis: %s\n", function, got,
           drmaa_strerror(got), want, diag);
    ++failures;
  }
  diag[0] = '\0';
}

static void information(void) {
  char text[DRMAA_DRM_SYSTEM_BUFFER];
  unsigned int major = 0, minor = 0;
  expect("drmaa_version", drmaa_version(&major, &minor, diag, sizeof diag), DRMAA_ERRNO_SUCCESS);
  if (major != 1 || minor != 0) expect("drmaa_version 1.0", 1, 0);
  expect("drmaa_get_DRM_system", drmaa_get_DRM_system(text, sizeof text, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  expect("drmaa_get_DRMAA_implementation",
         drmaa_get_DRMAA_implementation(text, sizeof text, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  expect("drmaa_get_contact", drmaa_get_contact(text, sizeof text, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  expect("drmaa_strerror",
         strcmp(drmaa_strerror(DRMAA_ERRNO_INVALID_JOB), drmaa_strerror(DRMAA_ERRNO_SUCCESS)) != 0
             ? DRMAA_ERRNO_SUCCESS : DRMAA_ERRNO_INTERNAL_ERROR,
         DRMAA_ERRNO_SUCCESS);
}

/* Lists the attribute names; `names_function` is drmaa_get_attribute_names or the vector one. */
static void attribute_names(int (*names_function)(drmaa_attr_names_t **, char *, size_t),
                            const char *name, size_t want) {
  drmaa_attr_names_t *names = NULL;
  char value[DRMAA_ATTR_BUFFER];
  size_t count = 0, seen = 0;
  expect(name, names_function(&names, diag, sizeof diag), DRMAA_ERRNO_SUCCESS);
  expect("drmaa_get_num_attr_names", drmaa_get_num_attr_names(names, &count), DRMAA_ERRNO_SUCCESS);
  while (drmaa_get_next_attr_name(names, value, sizeof value) == DRMAA_ERRNO_SUCCESS) ++seen;
  expect("drmaa_get_next_attr_name", seen == count && count >= want ? 0 : 1, 0);
  drmaa_release_attr_names(names);
  printf("ok drmaa_release_attr_names\n");
}

static drmaa_job_template_t *exit_template(const char *code) {
  drmaa_job_template_t *jt = NULL;
  const char *argv[] = {"-c", code, NULL};
  expect("drmaa_allocate_job_template", drmaa_allocate_job_template(&jt, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  expect("drmaa_set_attribute",
         drmaa_set_attribute(jt, DRMAA_REMOTE_COMMAND, "/bin/sh", diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  expect("drmaa_set_vector_attribute",
         drmaa_set_vector_attribute(jt, DRMAA_V_ARGV, argv, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  return jt;
}

static void template_values(drmaa_job_template_t *jt) {
  char value[DRMAA_ATTR_BUFFER];
  drmaa_attr_values_t *values = NULL;
  size_t count = 0;
  expect("drmaa_get_attribute",
         drmaa_get_attribute(jt, DRMAA_REMOTE_COMMAND, value, sizeof value, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  if (strcmp(value, "/bin/sh") != 0) expect("drmaa_get_attribute's value", 1, 0);
  expect("drmaa_get_vector_attribute",
         drmaa_get_vector_attribute(jt, DRMAA_V_ARGV, &values, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  expect("drmaa_get_num_attr_values", drmaa_get_num_attr_values(values, &count),
         DRMAA_ERRNO_SUCCESS);
  expect("drmaa_get_next_attr_value", drmaa_get_next_attr_value(values, value, sizeof value),
         DRMAA_ERRNO_SUCCESS);
  if (count != 2 || strcmp(value, "-c") != 0) expect("drmaa_get_vector_attribute's values", 1, 0);
  drmaa_release_attr_values(values);
  printf("ok drmaa_release_attr_values\n");
  /* A bad value names what was expected. */
  expect("drmaa_set_attribute (bad value)",
         drmaa_set_attribute(jt, DRMAA_JOIN_FILES, "yes", diag, sizeof diag),
         DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT);
}

/* A job that exits 3: the stat functions read it. */
static void run_and_wait(void) {
  drmaa_job_template_t *jt = exit_template("exit 3");
  char id[DRMAA_JOBNAME_BUFFER], id_out[DRMAA_JOBNAME_BUFFER], signal[DRMAA_SIGNAL_BUFFER];
  int stat = 0, flag = -1, status = -1, ps = -1;
  drmaa_attr_values_t *rusage = NULL;
  template_values(jt);
  expect("drmaa_run_job", drmaa_run_job(id, sizeof id, jt, diag, sizeof diag), DRMAA_ERRNO_SUCCESS);
  expect("drmaa_job_ps", drmaa_job_ps(id, &ps, diag, sizeof diag), DRMAA_ERRNO_SUCCESS);
  expect("drmaa_wait", drmaa_wait(id, id_out, sizeof id_out, &stat, DRMAA_TIMEOUT_WAIT_FOREVER,
                                  &rusage, diag, sizeof diag), DRMAA_ERRNO_SUCCESS);
  drmaa_release_attr_values(rusage);
  expect("drmaa_wifexited", drmaa_wifexited(&flag, stat, diag, sizeof diag), DRMAA_ERRNO_SUCCESS);
  if (flag != 1) expect("drmaa_wifexited's value", 1, 0);
  expect("drmaa_wexitstatus", drmaa_wexitstatus(&status, stat, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  if (status != 3) expect("drmaa_wexitstatus's value", 1, 0);
  expect("drmaa_wifsignaled", drmaa_wifsignaled(&flag, stat, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  if (flag != 0) expect("drmaa_wifsignaled's value", 1, 0);
  expect("drmaa_wtermsig", drmaa_wtermsig(signal, sizeof signal, stat, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  expect("drmaa_wcoredump", drmaa_wcoredump(&flag, stat, diag, sizeof diag), DRMAA_ERRNO_SUCCESS);
  expect("drmaa_wifaborted", drmaa_wifaborted(&flag, stat, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  if (flag != 0) expect("drmaa_wifaborted's value", 1, 0);
  /* Reaped: a second wait names no job. */
  expect("drmaa_wait (reaped)", drmaa_wait(id, NULL, 0, &stat, DRMAA_TIMEOUT_NO_WAIT, NULL, diag,
                                           sizeof diag), DRMAA_ERRNO_INVALID_JOB);
  expect("drmaa_delete_job_template", drmaa_delete_job_template(jt, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
}

/* Three held elements: released, one terminated, then synchronized. */
static void bulk_control_synchronize(void) {
  drmaa_job_template_t *jt = exit_template("exit 0");
  drmaa_job_ids_t *ids = NULL;
  char id[DRMAA_JOBNAME_BUFFER], first[DRMAA_JOBNAME_BUFFER] = "";
  size_t count = 0;
  const char *all[] = {DRMAA_JOB_IDS_SESSION_ALL, NULL};
  expect("drmaa_set_attribute (hold)",
         drmaa_set_attribute(jt, DRMAA_JS_STATE, DRMAA_SUBMISSION_STATE_HOLD, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  expect("drmaa_run_bulk_jobs", drmaa_run_bulk_jobs(&ids, jt, 1, 3, 1, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  expect("drmaa_get_num_job_ids", drmaa_get_num_job_ids(ids, &count), DRMAA_ERRNO_SUCCESS);
  if (count != 3) expect("drmaa_get_num_job_ids's value", 1, 0);
  while (drmaa_get_next_job_id(ids, id, sizeof id) == DRMAA_ERRNO_SUCCESS) {
    if (first[0] == '\0') strcpy(first, id);
  }
  printf("ok drmaa_get_next_job_id\n");
  drmaa_release_job_ids(ids);
  printf("ok drmaa_release_job_ids\n");
  expect("drmaa_control (terminate)", drmaa_control(first, DRMAA_CONTROL_TERMINATE, diag,
                                                    sizeof diag), DRMAA_ERRNO_SUCCESS);
  expect("drmaa_control (release all)", drmaa_control(DRMAA_JOB_IDS_SESSION_ALL,
                                                      DRMAA_CONTROL_RELEASE, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  expect("drmaa_control (suspend)", drmaa_control(first, DRMAA_CONTROL_SUSPEND, diag, sizeof diag),
         DRMAA_ERRNO_SUSPEND_INCONSISTENT_STATE);
  expect("drmaa_synchronize", drmaa_synchronize(all, 120, 1, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
  expect("drmaa_delete_job_template", drmaa_delete_job_template(jt, diag, sizeof diag),
         DRMAA_ERRNO_SUCCESS);
}

int main(void) {
  int ps = 0;
  information();
  expect("drmaa_init", drmaa_init(NULL, diag, sizeof diag), DRMAA_ERRNO_SUCCESS);
  expect("drmaa_init (twice)", drmaa_init(NULL, diag, sizeof diag),
         DRMAA_ERRNO_ALREADY_ACTIVE_SESSION);
  attribute_names(drmaa_get_attribute_names, "drmaa_get_attribute_names", 13);
  attribute_names(drmaa_get_vector_attribute_names, "drmaa_get_vector_attribute_names", 3);
  run_and_wait();
  bulk_control_synchronize();
  expect("drmaa_job_ps (unknown job)", drmaa_job_ps("999999", &ps, diag, sizeof diag),
         DRMAA_ERRNO_INVALID_JOB);
  expect("drmaa_exit", drmaa_exit(diag, sizeof diag), DRMAA_ERRNO_SUCCESS);
  expect("drmaa_exit (no session)", drmaa_exit(diag, sizeof diag), DRMAA_ERRNO_NO_ACTIVE_SESSION);
  return failures == 0 ? 0 : 1;
}
