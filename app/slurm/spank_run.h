/*
 * Running gpupart (the plugin's helper) from slurmstepd: fork, exec with a prepared environment, collect
 * stdout and stderr separately, give up (SIGKILL) after a deadline. Everything the child needs is built
 * before fork(): slurmstepd is multi-threaded, so the child calls nothing but dup2, close and execve.
 */
#ifndef GPUPART_SPANK_RUN_H
#define GPUPART_SPANK_RUN_H

#include <stddef.h>

struct spank_output {
    char out[16384];  /* stdout, NUL-terminated; more is cut (out_cut) */
    char err[8192];   /* stderr, the same */
    int out_cut;
    int err_cut;
    int status;       /* the exit status; 126 when it could not be run, 124 when it was killed at the deadline,
                         -1 when slurmstepd reaped it first (its output must say how it ended) */
    char why[256];    /* why it could not be run or was killed; "" otherwise */
};

/* Runs argv[0] (an absolute path) with `envp`; at most `timeout_ms`. Fills `result`; returns result->status. */
__attribute__((visibility("hidden"))) int gpupart_spank_run(char* const argv[], char* const envp[], int timeout_ms, struct spank_output* result);

#endif
