#define _GNU_SOURCE
#include "spank_job.h"

#include <stdio.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

int gpupart_spank_node_gres(uint32_t job, const char* node, int batch_step, char* detail, size_t detail_size, char* why,
                            size_t why_size) {
    detail[0] = '\0';
    job_info_msg_t* message = NULL;
    if (slurm_load_job(&message, job, SHOW_DETAIL) != 0 || message == NULL) {
        snprintf(why, why_size, "cannot ask slurmctld about job %u: %s", job, slurm_strerror(slurm_get_errno()));
        return -1;
    }
    int rc = 0;
    const slurm_job_info_t* info = NULL;
    for (uint32_t i = 0; i < message->record_count; ++i)
        if (message->job_array[i].job_id == job) info = &message->job_array[i];
    if (info == NULL) {
        snprintf(why, why_size, "slurmctld does not know job %u", job);
        rc = -1;
    } else {
        /* gres_detail_str[i] is the i-th node of the job's node list. */
        const char* name = node != NULL && node[0] != '\0' ? node : (batch_step ? info->batch_host : NULL);
        int index = -1;
        if (name != NULL && info->nodes != NULL) {
            hostlist_t nodes = slurm_hostlist_create(info->nodes);
            if (nodes != NULL) {
                index = slurm_hostlist_find(nodes, name);
                slurm_hostlist_destroy(nodes);
            }
        }
        if (index < 0) {
            snprintf(why, why_size, "node %s is not among job %u's nodes (%s)", name ? name : "(unknown)", job,
                     info->nodes ? info->nodes : "none");
            rc = -1;
        } else if ((uint32_t)index < info->gres_detail_cnt && info->gres_detail_str[index] != NULL) {
            if ((size_t)snprintf(detail, detail_size, "%s", info->gres_detail_str[index]) >= detail_size) {
                snprintf(why, why_size, "job %u's GRES on %s is too long to read", job, name);
                rc = -1;
            }
        }
    }
    slurm_free_job_info_msg(message);
    return rc;
}
