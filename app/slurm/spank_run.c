#define _GNU_SOURCE
#include "spank_run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Appends what `fd` has to `buffer` (size `size`, `used` so far); sets *cut when it is full. 0 at EOF. */
static int drain(int fd, char* buffer, size_t size, size_t* used, int* cut) {
    char chunk[4096];
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0) return errno == EINTR || errno == EAGAIN ? 1 : 0;
    if (n == 0) return 0;
    size_t take = (size_t)n;
    if (*used + take >= size) {
        take = size - 1 - *used;
        *cut = 1;
    }
    memcpy(buffer + *used, chunk, take);
    *used += take;
    buffer[*used] = '\0';
    return 1;
}

int gpupart_spank_run(char* const argv[], char* const envp[], int timeout_ms, struct spank_output* result) {
    memset(result, 0, sizeof *result);
    result->status = 126;
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0) {
        snprintf(result->why, sizeof result->why, "pipe: %s", strerror(errno));
        return result->status;
    }
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
        snprintf(result->why, sizeof result->why, "pipe: %s", strerror(errno));
        close(out_pipe[0]);
        close(out_pipe[1]);
        return result->status;
    }
    const pid_t child = fork();
    if (child == 0) {
        const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null >= 0) dup2(null, 0);
        dup2(out_pipe[1], 1);
        dup2(err_pipe[1], 2);
        execve(argv[0], argv, envp);
        static const char message[] = "cannot run gpupart (execve failed)\n";
        (void)!write(2, message, sizeof message - 1);
        _exit(126);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (child < 0) {
        snprintf(result->why, sizeof result->why, "fork: %s", strerror(errno));
        close(out_pipe[0]);
        close(err_pipe[0]);
        return result->status;
    }
    size_t out_used = 0, err_used = 0;
    int out_open = 1, err_open = 1, killed = 0;
    const long long deadline = now_ms() + timeout_ms;
    while (out_open || err_open) {
        const long long left = deadline - now_ms();
        if (left <= 0) {
            kill(child, SIGKILL);
            killed = 1;
            break;
        }
        struct pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0}, {err_open ? err_pipe[0] : -1, POLLIN, 0}};
        if (poll(fds, 2, (int)left) < 0 && errno != EINTR) break;
        if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
            out_open = drain(out_pipe[0], result->out, sizeof result->out, &out_used, &result->out_cut);
        if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
            err_open = drain(err_pipe[0], result->err, sizeof result->err, &err_used, &result->err_cut);
    }
    close(out_pipe[0]);
    close(err_pipe[0]);
    int status = 0;
    pid_t waited;
    do waited = waitpid(child, &status, 0);
    while (waited < 0 && errno == EINTR);
    if (killed) {
        result->status = 124;
        snprintf(result->why, sizeof result->why, "%s did not answer within %d s: killed", argv[0], timeout_ms / 1000);
    } else if (waited < 0) {
        /* Reaped by someone else (slurmstepd waits for any child while its tasks run): unknown. */
        result->status = -1;
        snprintf(result->why, sizeof result->why, "its exit status was collected by another wait");
    } else if (WIFEXITED(status)) {
        result->status = WEXITSTATUS(status);
    } else {
        result->status = 128 + WTERMSIG(status);
        snprintf(result->why, sizeof result->why, "%s was killed by signal %d", argv[0], WTERMSIG(status));
    }
    return result->status;
}
