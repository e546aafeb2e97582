// Clang's thread-safety annotations (-Wthread-safety), as LevelDB's port/thread_annotations.h
// names them: which mutex guards a member, which a function requires held. Under Clang the
// compiler checks them; under GCC (the default build) they expand to nothing and document.
// Used by server/ and store/ (STYLE.md); core has no locks.
#pragma once

#if defined(__clang__)
#define SLUICE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SLUICE_THREAD_ANNOTATION(x)
#endif

#define SLUICE_CAPABILITY(name) SLUICE_THREAD_ANNOTATION(capability(name))
#define SLUICE_SCOPED_CAPABILITY SLUICE_THREAD_ANNOTATION(scoped_lockable)
#define SLUICE_GUARDED_BY(mu) SLUICE_THREAD_ANNOTATION(guarded_by(mu))
#define SLUICE_PT_GUARDED_BY(mu) SLUICE_THREAD_ANNOTATION(pt_guarded_by(mu))
#define SLUICE_REQUIRES(...) SLUICE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define SLUICE_EXCLUDES(...) SLUICE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define SLUICE_ACQUIRE(...) SLUICE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define SLUICE_RELEASE(...) SLUICE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define SLUICE_TRY_ACQUIRE(...) SLUICE_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define SLUICE_RETURN_CAPABILITY(x) SLUICE_THREAD_ANNOTATION(lock_returned(x))
#define SLUICE_NO_THREAD_SAFETY_ANALYSIS SLUICE_THREAD_ANNOTATION(no_thread_safety_analysis)
