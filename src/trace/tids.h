/* tids.h — thread ids reserved for records that belong to no application
 * thread. Real Linux thread ids stay below 2^22 (pid_max), so ids from
 * 0xFFFFFF00 up never clash with them. One list, so producers never pick
 * the same one. */
#ifndef PROF_TIDS_H
#define PROF_TIDS_H
#define PROF_TID_RESOURCES 0xFFFFFF01u /* resource samples (src/res) */
#define PROF_TID_CUPTI 0xFFFFFF02u     /* CUPTI bookkeeping (src/gpu) */
#define PROF_TID_NVTX_LANE0 0xFFFFFF10u /* NVTX start/end ranges: 16 lanes, ..1F (src/gpu/nvtx.c) */
#endif
