/* slice: see slice.h. */
#define _DEFAULT_SOURCE /* syscall() */
#include "slice.h"

#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(SYS_sched_setattr) && defined(SYS_sched_getattr)
/* The kernel's struct sched_attr, its first version (include/uapi/linux/sched/types.h);
 * glibc before 2.41 declares none. For a fair policy, sched_runtime is the slice asked for. */
struct slice_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};

enum { POLICY_OTHER = 0, POLICY_BATCH = 3, FLAG_RESET_ON_FORK = 1 };

static int slice_ask(uint64_t ns) {
    struct slice_attr now, want;
    memset(&now, 0, sizeof now);
    if (syscall(SYS_sched_getattr, 0, &now, sizeof now, 0) != 0) return -1;
    if (now.sched_policy != POLICY_OTHER && now.sched_policy != POLICY_BATCH) return -1;
    memset(&want, 0, sizeof want);
    want.size = sizeof want;
    want.sched_policy = now.sched_policy;
    want.sched_flags = now.sched_flags & FLAG_RESET_ON_FORK;
    want.sched_nice = now.sched_nice; /* as it was: an operator's nice stays */
    want.sched_runtime = ns; /* 0: the default */
    return syscall(SYS_sched_setattr, 0, &want, 0) == 0 ? 0 : -1;
}

int slice_short(void) { return slice_ask(SLICE_NS); }
int slice_default(void) { return slice_ask(0); }
#else
int slice_short(void) { return -1; }
int slice_default(void) { return -1; }
#endif
