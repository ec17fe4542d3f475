/*
 * What Slurm allocated a job, from slurmctld (slurm_load_job, resolved from the libslurmfull that
 * slurmstepd, srun and sbatch already have loaded: the plugin links no Slurm library of its own).
 */
#ifndef GPUPART_SPANK_JOB_H
#define GPUPART_SPANK_JOB_H

#include <stddef.h>
#include <stdint.h>

struct gpupart_job_gres {
    char node_detail[4096]; /* this node's GRES ("tpc:gpu0(CNT:16),gpu:1(IDX:0)"); "" when none or node unknown */
    int node_found;         /* this node is among the job's nodes */
    int job_has_tpc;        /* the job got tpc on some node (or asked for it) */
    char nodes[256];        /* the job's nodes, for messages */
};

/* Job `job`'s GRES, and this node's. `node` is Slurm's name for this node ("" when not known: then the job's
 * only node, or the batch host for the batch step). 0, or -1 with one line in `why` when slurmctld cannot tell. */
__attribute__((visibility("hidden"))) int gpupart_spank_job_gres(uint32_t job, const char* node, int batch_step,
                                                                 struct gpupart_job_gres* gres, char* why, size_t why_size);

/* Whether a GRES detail list ("gpu:a100:2(IDX:0,2),tpc:gpu1(CNT:8)") has a GRES named `name`. */
__attribute__((visibility("hidden"))) int gpupart_gres_has(const char* detail, const char* name);

/* Whether node `node` offers tpc GRES (its slurm.conf Gres=): 1, 0, or -1 when slurmctld cannot tell. A node
 * without it (a CPU node, a node of whole GPUs) is not gpupart's: jobs there are left alone. */
__attribute__((visibility("hidden"))) int gpupart_spank_node_offers_tpc(const char* node);

#endif
