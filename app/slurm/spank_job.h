/*
 * What Slurm allocated a job on this node, from slurmctld (slurm_load_job, resolved from the libslurmfull
 * that slurmstepd, srun and sbatch already have loaded: the plugin links no Slurm library of its own).
 */
#ifndef GPUPART_SPANK_JOB_H
#define GPUPART_SPANK_JOB_H

#include <stddef.h>
#include <stdint.h>

/* This node's GRES detail of job `job` ("tpc:gpu0(CNT:16),gpu:1(IDX:0)"; "" when the job has none here).
 * `node` is Slurm's name for this node ("" when not known: then the batch host for the batch step).
 * 0, or -1 with one line in `why`. */
__attribute__((visibility("hidden"))) int gpupart_spank_node_gres(uint32_t job, const char* node, int batch_step, char* detail, size_t detail_size, char* why,
                            size_t why_size);

#endif
