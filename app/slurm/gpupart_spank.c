/*
 * gpupart_spank.so: TPCs as a Slurm generic resource (docs/slurm.md). For a job step with `tpc` GRES on
 * this node (gres.conf: one tpc Type per GPU, "gpu<index>"), in slurmstepd:
 *  - before the tasks start (init_post_opt, as root): asks slurmctld what the job got here, and runs
 *    `gpupart slurm place`, which places that many TPCs on each GPU (GPC-packed, none another job holds,
 *    under the GPU's reservation lock), joins or starts MPS, and answers with the tasks' environment:
 *    the shim preloaded with that mask (GPUPART_TPCS, GPUPART_REAL_TPCS as `gpupart run` sets them) and
 *    GPUPART_JOB=slurm:<job>.<step>, which the shim copies into the process's slot;
 *  - in each task (task_init): the first task prints gpupart's lines on the job's stderr; when the
 *    placement was refused every task fails, so a job never runs unconfined by mistake;
 *  - at step end (exit, as root; also after a task was killed): `gpupart slurm release`, which gives the
 *    step's TPCs back and sweeps those of jobs whose slurmstepd is gone.
 *  - a step of a job that got no TPCs on this node (and no GPUs of Slurm's gpu GRES, which confine
 *    themselves) gets what notpc= says: its tasks see no GPU (hide, the default), fail (refuse), or run
 *    unconfined over every partition (run).
 * plugstack.conf arguments: gpupart=PATH (default /usr/bin/gpupart), snapshot=SNAPSHOT (a recorded or
 * built-in topology instead of the live one), registry=DIR (GPUPART_REGISTRY_DIR), shim=PATH
 * (GPUPART_SHIM), mps=off, timeout=SECONDS (default 60), notpc=hide|refuse|run.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "spank_job.h"
#include "spank_run.h"

SPANK_PLUGIN(gpupart, 1)  /* the macro brings its own semicolon */

extern char** environ;

static struct {
    char gpupart[512];
    char snapshot[512];
    char registry[512];
    char shim[512];
    int mps;
    int timeout_s;
    enum { NOTPC_HIDE, NOTPC_REFUSE, NOTPC_RUN } notpc;
} g_config = {"/usr/bin/gpupart", "", "", "", 1, 60, NOTPC_HIDE};

static char g_lines[8192]; /* gpupart's lines for the job's stderr */
static int g_refused;      /* the placement failed: every task fails with g_lines */
static int g_placed;       /* this step asked for TPCs: give them back at exit */

static int set_text(char* field, size_t size, const char* value, const char* name) {
    if ((size_t)snprintf(field, size, "%s", value) < size) return 0;
    slurm_error("gpupart: plugstack argument %s is too long", name);
    return -1;
}

static int parse_arguments(int ac, char** av) {
    for (int i = 0; i < ac; ++i) {
        const char* arg = av[i];
        int rc = 0;
        if (strncmp(arg, "gpupart=", 8) == 0) rc = set_text(g_config.gpupart, sizeof g_config.gpupart, arg + 8, "gpupart");
        else if (strncmp(arg, "snapshot=", 9) == 0) rc = set_text(g_config.snapshot, sizeof g_config.snapshot, arg + 9, "snapshot");
        else if (strncmp(arg, "registry=", 9) == 0) rc = set_text(g_config.registry, sizeof g_config.registry, arg + 9, "registry");
        else if (strncmp(arg, "shim=", 5) == 0) rc = set_text(g_config.shim, sizeof g_config.shim, arg + 5, "shim");
        else if (strcmp(arg, "mps=off") == 0) g_config.mps = 0;
        else if (strcmp(arg, "mps=auto") == 0) g_config.mps = 1;
        else if (strncmp(arg, "timeout=", 8) == 0 && atoi(arg + 8) > 0) g_config.timeout_s = atoi(arg + 8);
        else if (strcmp(arg, "notpc=hide") == 0) g_config.notpc = NOTPC_HIDE;
        else if (strcmp(arg, "notpc=refuse") == 0) g_config.notpc = NOTPC_REFUSE;
        else if (strcmp(arg, "notpc=run") == 0) g_config.notpc = NOTPC_RUN;
        else {
            slurm_error("gpupart: unknown plugstack argument '%s' (gpupart=, snapshot=, registry=, shim=, mps=off, "
                        "timeout=, notpc=hide|refuse|run)", arg);
            return -1;
        }
        if (rc != 0) return rc;
    }
    if (g_config.gpupart[0] != '/') {
        slurm_error("gpupart: gpupart=%s must be an absolute path", g_config.gpupart);
        return -1;
    }
    return 0;
}

int slurm_spank_init(spank_t sp, int ac, char** av) {
    (void)sp;
    return parse_arguments(ac, av);
}

/* slurmstepd's environment with the registry and shim the plugstack names, and a PATH (for MPS). */
static char** helper_environment(void) {
    static char registry[600], shim[600];
    size_t count = 0;
    while (environ[count] != NULL) ++count;
    char** envp = calloc(count + 4, sizeof *envp);
    if (envp == NULL) return NULL;
    size_t used = 0;
    int has_path = 0;
    for (size_t i = 0; i < count; ++i) {
        if (g_config.registry[0] && strncmp(environ[i], "GPUPART_REGISTRY_DIR=", 21) == 0) continue;
        if (g_config.shim[0] && strncmp(environ[i], "GPUPART_SHIM=", 13) == 0) continue;
        has_path = has_path || strncmp(environ[i], "PATH=", 5) == 0;
        envp[used++] = environ[i];
    }
    if (g_config.registry[0]) {
        snprintf(registry, sizeof registry, "GPUPART_REGISTRY_DIR=%s", g_config.registry);
        envp[used++] = registry;
    }
    if (g_config.shim[0]) {
        snprintf(shim, sizeof shim, "GPUPART_SHIM=%s", g_config.shim);
        envp[used++] = shim;
    }
    if (!has_path) envp[used++] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
    return envp;
}

static void append_line(const char* line) {
    const size_t used = strlen(g_lines);
    snprintf(g_lines + used, sizeof g_lines - used, "%s\n", line);
}

/* Applies one "set|default|prepend NAME=VALUE" line of `gpupart slurm place` to the tasks' environment. */
static int apply_line(spank_t sp, char* line) {
    char* space = strchr(line, ' ');
    char* equals = space ? strchr(space + 1, '=') : NULL;
    if (space == NULL || equals == NULL) return -1;
    *space = '\0';
    *equals = '\0';
    const char* name = space + 1;
    const char* value = equals + 1;
    for (const char* c = name; *c; ++c)
        if (!isupper((unsigned char)*c) && !isdigit((unsigned char)*c) && *c != '_') return -1;
    char existing[4096];
    const int present = spank_getenv(sp, name, existing, sizeof existing) == ESPANK_SUCCESS && existing[0] != '\0';
    if (strcmp(line, "set") == 0) return spank_setenv(sp, name, value, 1) == ESPANK_SUCCESS ? 0 : -1;
    if (strcmp(line, "default") == 0) return present ? 0 : (spank_setenv(sp, name, value, 0) == ESPANK_SUCCESS ? 0 : -1);
    if (strcmp(line, "prepend") == 0) {
        char joined[8192];
        snprintf(joined, sizeof joined, present ? "%s:%s" : "%s", value, existing);
        return spank_setenv(sp, name, joined, 1) == ESPANK_SUCCESS ? 0 : -1;
    }
    return -1;
}

static void refuse(const char* format, const char* detail) {
    char line[1024];
    snprintf(line, sizeof line, format, detail);
    append_line(line);
    slurm_error("%s", line);
    g_refused = 1;
}

/* Slurm's name for this node: slurmd passes SLURMD_NODENAME to every slurmstepd it starts (seen with
 * Debian's Slurm 22.05 in batch, srun and salloc steps). Never the job's environment: the job's user writes
 * it, and another node's name would give this node that node's GRES. "" when slurmstepd has none (then the
 * job's only node, or the batch host for a batch step, from slurmctld). */
static void node_name(char* node, size_t size) {
    node[0] = '\0';
    const char* own = getenv("SLURMD_NODENAME");
    if (own != NULL && strlen(own) < size) snprintf(node, size, "%s", own);
}

/* A step with no TPCs on this node, on a node whose GPUs gpupart partitions: what notpc= says. */
static void no_tpcs(spank_t sp, uint32_t job) {
    char line[512];
    switch (g_config.notpc) {
    case NOTPC_RUN:
        return;
    case NOTPC_REFUSE:
        snprintf(line, sizeof line, "gpupart: Slurm job %u asked no TPCs of this node's GPUs, which are shared by TPC: "
                 "its tasks do not start (ask --gres=tpc:COUNT, or tpc:gpuN:COUNT for GPU N)", job);
        refuse("%s", line);
        return;
    case NOTPC_HIDE:
        if (spank_setenv(sp, "CUDA_VISIBLE_DEVICES", "", 1) != ESPANK_SUCCESS) {
            snprintf(line, sizeof line, "gpupart: Slurm job %u asked no TPCs, and this node's GPUs could not be hidden "
                     "from it (CUDA_VISIBLE_DEVICES): its tasks do not start", job);
            refuse("%s", line);
            return;
        }
        snprintf(line, sizeof line, "gpupart: Slurm job %u asked no TPCs: this node's GPUs, shared by TPC, are hidden from "
                 "it (CUDA_VISIBLE_DEVICES=); ask --gres=tpc:COUNT to use them", job);
        append_line(line);
        return;
    }
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char** av) {
    (void)ac;
    (void)av;
    if (!spank_remote(sp)) return 0;
    uint32_t job = 0, step = 0;
    uid_t uid = 0;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS || spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
        return 0;
    if (step == SLURM_EXTERN_CONT) return 0; /* the job's container step runs no task of the job */
    char node[256], why[512];
    node_name(node, sizeof node);
    static struct gpupart_job_gres gres; /* 4 KiB: off the stack */
    if (gpupart_spank_job_gres(job, node, step == SLURM_BATCH_SCRIPT, &gres, why, sizeof why) != 0) {
        refuse("gpupart: %s: whether the job may use this node's GPUs cannot be told", why);
        return 0;
    }
    if (!gres.node_found) { /* which GRES are this node's cannot be told: never guess another node's */
        char line[768];
        snprintf(line, sizeof line, "node %s is not among job %u's nodes (%s)", node[0] ? node : "(unknown)", job, gres.nodes);
        refuse("gpupart: %s: what the job may use here cannot be told", line);
        return 0;
    }
    char* detail = gres.node_detail;
    if (!gpupart_gres_has(detail, "tpc")) {
        /* Slurm's own gpu GRES gives a job whole GPUs and sets their CUDA_VISIBLE_DEVICES itself; a node that
         * offers no tpc (a CPU node) has no GPU of gpupart's to hide. Not known: treated as gpupart's. */
        if (!gpupart_gres_has(detail, "gpu") && gpupart_spank_node_offers_tpc(node) != 0) no_tpcs(sp, job);
        return 0;
    }
    char step_name[64], step_id[32], uid_text[16], holder[16];
    if (step == SLURM_BATCH_SCRIPT) snprintf(step_id, sizeof step_id, "batch");
    else if (step == SLURM_INTERACTIVE_STEP) snprintf(step_id, sizeof step_id, "interactive");
    else snprintf(step_id, sizeof step_id, "%u", step);
    snprintf(step_name, sizeof step_name, "slurm:%u.%s", job, step_id);
    snprintf(uid_text, sizeof uid_text, "%u", (unsigned)uid);
    snprintf(holder, sizeof holder, "%d", (int)getpid());
    char* argv[16] = {g_config.gpupart, "slurm", "place", "--step", step_name, "--uid", uid_text, "--holder", holder, "--gres", detail};
    int argc = 11;
    if (g_config.snapshot[0]) {
        argv[argc++] = "--snapshot";
        argv[argc++] = g_config.snapshot;
    }
    if (!g_config.mps) argv[argc++] = "--no-mps";
    argv[argc] = NULL;
    char** envp = helper_environment();
    static struct spank_output result; /* 24 KiB: off the stack */
    g_placed = 1;
    if (envp == NULL) {
        refuse("gpupart: %s: out of memory", step_name);
        return 0;
    }
    gpupart_spank_run(argv, envp, g_config.timeout_s * 1000, &result);
    free(envp);
    snprintf(g_lines, sizeof g_lines, "%s", result.err);
    /* Success is exit 0 and the protocol's last line, "ok" (also when slurmstepd reaped the helper first). */
    const size_t out_length = strlen(result.out);
    const int ok = (result.status == 0 || result.status == -1) && !result.out_cut && out_length >= 3 &&
                   strcmp(result.out + out_length - 3, "ok\n") == 0;
    if (!ok) {
        refuse("gpupart: %s: the job's TPCs could not be placed, so its tasks do not start", step_name);
        if (result.why[0]) append_line(result.why);
        return 0;
    }
    char* rest = NULL;
    for (char* line = strtok_r(result.out, "\n", &rest); line != NULL; line = strtok_r(NULL, "\n", &rest)) {
        if (strcmp(line, "ok") == 0) continue;
        if (strcmp(line, "notpc") == 0) { /* tpc:0: no TPCs here after all */
            g_placed = 0;
            no_tpcs(sp, job);
            if (g_refused) return 0;
            continue;
        }
        if (strncmp(line, "log ", 4) == 0) {
            slurm_info("gpupart: %s", line + 4);
            continue;
        }
        if (apply_line(sp, line) != 0) {
            refuse("gpupart: the tasks' environment could not be set (%s)", line);
            return 0;
        }
    }
    slurm_info("gpupart: %s placed: %s", step_name, result.err);
    return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char** av) {
    (void)ac;
    (void)av;
    if (!spank_remote(sp)) return 0;
    int task = -1;
    spank_get_item(sp, S_TASK_ID, &task);
    if (task == 0 && g_lines[0] != '\0') {
        fputs(g_lines, stderr);
        fflush(stderr);
    }
    return g_refused ? -1 : 0;
}

int slurm_spank_exit(spank_t sp, int ac, char** av) {
    (void)ac;
    (void)av;
    if (!spank_remote(sp) || !g_placed) return 0;
    char holder[16];
    snprintf(holder, sizeof holder, "%d", (int)getpid());
    char* argv[] = {g_config.gpupart, "slurm", "release", "--holder", holder, NULL};
    char** envp = helper_environment();
    if (envp == NULL) return 0;
    static struct spank_output result;
    const int status = gpupart_spank_run(argv, envp, g_config.timeout_s * 1000, &result);
    free(envp);
    if (status != 0 && status != -1)
        slurm_error("gpupart: releasing this step's TPCs failed (%s%s): the next placement on this node sweeps them",
                    result.err, result.why);
    else if (result.out[0] != '\0')
        slurm_info("gpupart: %s", result.out);
    return 0;
}
