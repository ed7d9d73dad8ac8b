/*
 * The chaos campaign's slow disk: loaded with LD_PRELOAD into a controller (ferrokraft's
 * binary or Kafka's JVM, both of which reach fsync and fdatasync through glibc), it makes
 * every fsync/fdatasync wait first for the number of milliseconds written in the file named
 * by FERROKRAFT_SLOW_FSYNC, while that file exists. The test writes the file to start the
 * fault and deletes it to heal. Built by tests/chaos.rs with the machine's C compiler.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long delay_ms(void) {
    const char *flag = getenv("FERROKRAFT_SLOW_FSYNC");
    if (flag == NULL) {
        return 0;
    }
    int fd = open(flag, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    return atol(buf);
}

static void wait_first(void) {
    long ms = delay_ms();
    if (ms > 0) {
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
}

int fsync(int fd) {
    static int (*real)(int);
    if (real == NULL) {
        real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    }
    wait_first();
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (real == NULL) {
        real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    }
    wait_first();
    return real(fd);
}
