#define _GNU_SOURCE
#include "spank_job.h"

#include <stdio.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

int gpupart_gres_has(const char* detail, const char* name) {
    const size_t length = strlen(name);
    int depth = 0;
    for (const char* item = detail; item != NULL && *item != '\0';) {
        /* An item starts the list or follows a comma outside parentheses (IDX:0,2 has commas inside). */
        if (strncmp(item, name, length) == 0 && (item[length] == ':' || item[length] == '(' || item[length] == ',' ||
                                                 item[length] == '\0'))
            return 1;
        const char* next = item;
        for (; *next != '\0'; ++next) {
            if (*next == '(') ++depth;
            else if (*next == ')' && depth > 0) --depth;
            else if (*next == ',' && depth == 0) break;
        }
        item = *next == ',' ? next + 1 : NULL;
    }
    return 0;
}

/* A TRES list ("gres:tpc:16", "gres/tpc:gpu0:8;cpu=2") that asks for tpc. */
static int tres_asks_tpc(const char* tres) {
    return tres != NULL && (strstr(tres, "gres:tpc") != NULL || strstr(tres, "gres/tpc") != NULL);
}

int gpupart_spank_job_gres(uint32_t job, const char* node, int batch_step, struct gpupart_job_gres* gres, char* why,
                           size_t why_size) {
    memset(gres, 0, sizeof *gres);
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
        snprintf(gres->nodes, sizeof gres->nodes, "%s", info->nodes ? info->nodes : "none");
        for (uint32_t i = 0; i < info->gres_detail_cnt; ++i)
            if (info->gres_detail_str[i] != NULL && gpupart_gres_has(info->gres_detail_str[i], "tpc")) gres->job_has_tpc = 1;
        if (tres_asks_tpc(info->tres_per_node) || tres_asks_tpc(info->tres_per_job) ||
            tres_asks_tpc(info->tres_per_socket) || tres_asks_tpc(info->tres_per_task))
            gres->job_has_tpc = 1;
        /* gres_detail_str[i] is the i-th node of the job's node list. */
        const char* name = node != NULL && node[0] != '\0' ? node : (batch_step ? info->batch_host : NULL);
        int index = -1;
        if (info->nodes != NULL) {
            hostlist_t nodes = slurm_hostlist_create(info->nodes);
            if (nodes != NULL) {
                if (name != NULL) index = slurm_hostlist_find(nodes, name);
                else if (slurm_hostlist_count(nodes) == 1) index = 0; /* a job of one node: this one */
                slurm_hostlist_destroy(nodes);
            }
        }
        gres->node_found = index >= 0;
        if (index >= 0 && (uint32_t)index < info->gres_detail_cnt && info->gres_detail_str[index] != NULL &&
            (size_t)snprintf(gres->node_detail, sizeof gres->node_detail, "%s", info->gres_detail_str[index]) >=
                sizeof gres->node_detail) {
            snprintf(why, why_size, "job %u's GRES on %s is too long to read", job, name ? name : gres->nodes);
            rc = -1;
        }
    }
    slurm_free_job_info_msg(message);
    return rc;
}

int gpupart_spank_node_offers_tpc(const char* node) {
    if (node == NULL || node[0] == '\0') return -1;
    node_info_msg_t* message = NULL;
    char name[256];
    snprintf(name, sizeof name, "%s", node);
    if (slurm_load_node_single(&message, name, SHOW_ALL) != 0 || message == NULL) return -1;
    int offers = -1;
    for (uint32_t i = 0; i < message->record_count; ++i) {
        const node_info_t* info = &message->node_array[i];
        if (info->name != NULL && strcmp(info->name, node) == 0) offers = info->gres != NULL && gpupart_gres_has(info->gres, "tpc");
    }
    slurm_free_node_info_msg(message);
    return offers;
}
