/*
 * Registering a process that loaded libcuda (shim_register.h): its registry slot, made in its user's
 * directory with the start mask (`gpupart run`'s, or a profile rule's), and guarded against truncation.
 */
#define _GNU_SOURCE
#include "shim_register.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control_seqlock.h"
#include "registry_slot.h"
#include "shim_devices.h"
#include "shim_start.h"
#include "slot_guard.h"

struct gpupart_slot_file* gpupart_shim_register(struct gpupart_slot_file* private_slot, char* slot_path, size_t slot_path_size,
                                                int* slot_pid, uint32_t* initial_state) {
    char root[256];
    char user_dir[512];
    char why[1024] = "";
    char command[GPUPART_COMMAND_BYTES];
    char exe[64];
    char start_rule[80];
    gpupart_read_command(command, sizeof command, exe, sizeof exe);
    const int pid = getpid();
    int error = gpupart_registry_dir(root, sizeof root);
    /* A root named by $GPUPART_REGISTRY_DIR may be made here; /run/gpupart and /dev/shm are never made. */
    if (error != 0) { /* nothing was written to `root`: say why without it */
        root[0] = '\0';
        snprintf(why, sizeof why, "%s is longer than %zu characters: no registry", GPUPART_ENV_REGISTRY_DIR, sizeof root - 1);
    }
    if (error == 0) error = gpupart_registry_root_check(root, getenv(GPUPART_ENV_REGISTRY_DIR) != NULL, why, sizeof why);
    if (error == 0) {
        error = gpupart_user_dir(root, (uint32_t)getuid(), 1, user_dir, sizeof user_dir);
        if (error != 0) snprintf(why, sizeof why, "cannot make this user's directory in %s (%s)", root, strerror(-error));
    } else if (why[0] == '\0') {
        snprintf(why, sizeof why, "registry %s: %s", root, strerror(-error));
    }
    static struct gpupart_control_payload initial; /* 1 KiB: setup runs once */
    *initial_state = gpupart_start_control(error == 0 ? root : NULL, exe, command, &initial, start_rule, sizeof start_rule);
    for (uint32_t i = 0; i < initial.count; ++i) gpupart_devices_remember_real(&initial.gpus[i]);
    struct gpupart_slot_file* slot = NULL;
    if (error == 0) {
        error = gpupart_slot_create(user_dir, pid, gpupart_process_start_time(pid), getuid(), command, GPUPART_SHIM_VERSION,
                                    start_rule, getenv(GPUPART_ENV_JOB), &initial, &slot, slot_path, slot_path_size);
        if (error != 0) snprintf(why, sizeof why, "cannot register in %s (%s)", user_dir, strerror(-error));
    }
    if (error == 0) gpupart_slot_guard(slot); /* from here a truncated slot cannot kill this process */
    if (error != 0) {
        /* Keep the start masks, privately: confinement must not depend on the registry being usable. */
        fprintf(stderr, "gpupart-shim: %s: the start mask applies but cannot be changed or seen\n", why);
        gpupart_control_write(&private_slot->control, &initial);
        return private_slot;
    }
    *slot_pid = pid;
    return slot;
}

