/* Steps the wall clock of the process it is preloaded into (LD_PRELOAD), as an NTP step
 * would: CLOCK_REALTIME, gettimeofday and time are moved by a signed number of
 * milliseconds read from the first 8 bytes of the file named by TALLY_CLOCK_STEP_FILE
 * (little-endian, mapped, so a test can change it while the process runs). Monotonic
 * clocks are left alone. Built and used by the Redis tests (tests/common/mod.rs).
 *
 * The real time comes from the system call, not from the next symbol: looking that up
 * (dlsym) can allocate, and the server's allocator reads the clock while it starts. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int64_t *volatile step_ms;
static int looked;

static int64_t step(void) {
    if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
        const char *path = getenv("TALLY_CLOCK_STEP_FILE");
        if (path) {
            int fd = open(path, O_RDONLY);
            if (fd >= 0) {
                void *map = mmap(0, 8, PROT_READ, MAP_SHARED, fd, 0);
                close(fd);
                if (map != MAP_FAILED) step_ms = map;
            }
        }
        __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
    }
    return step_ms ? __atomic_load_n(step_ms, __ATOMIC_RELAXED) : 0;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    long r = syscall(SYS_clock_gettime, id, ts);
    if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
        int64_t ms = step();
        int64_t ns = (int64_t)ts->tv_nsec + (ms % 1000) * 1000000;
        ts->tv_sec += ms / 1000;
        while (ns < 0) {
            ns += 1000000000;
            ts->tv_sec -= 1;
        }
        while (ns >= 1000000000) {
            ns -= 1000000000;
            ts->tv_sec += 1;
        }
        ts->tv_nsec = ns;
    }
    return (int)r;
}

int gettimeofday(struct timeval *tv, void *tz) {
    struct timespec ts;
    int r = clock_gettime(CLOCK_REALTIME, &ts);
    (void)tz;
    if (r == 0 && tv) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return r;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out) *out = ts.tv_sec;
    return ts.tv_sec;
}
