/* cupti_records.h — which CUPTI activity record versions the backend reads
 * (chosen by CUPTI_API_VERSION), and the field offsets it relies on, pinned
 * with _Static_assert so a header where one moves fails to build. Included
 * after <cupti.h> by cupti.c (the one source file of the library that
 * includes CUPTI's headers) and by its test, which builds records of the
 * same versions.
 */
#ifndef PROF_CUPTI_RECORDS_H
#define PROF_CUPTI_RECORDS_H

#include <stddef.h>

#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 cu_kernel;
typedef CUpti_ActivityMemcpy6 cu_memcpy;
typedef CUpti_ActivityMemset4 cu_memset;
typedef CUpti_ActivityMemory4 cu_memory;
typedef CUpti_ActivitySynchronization2 cu_sync;
typedef CUpti_ActivityDevice5 cu_device;
typedef CUpti_ActivityOverhead3 cu_overhead;
#else /* CUDA 11.8 and 12.x: the versions every one of them has */
typedef CUpti_ActivityKernel4 cu_kernel;
typedef CUpti_ActivityMemcpy4 cu_memcpy;
typedef CUpti_ActivityMemset3 cu_memset;
typedef CUpti_ActivityMemory2 cu_memory;
typedef CUpti_ActivitySynchronization cu_sync;
typedef CUpti_ActivityDevice4 cu_device;
typedef CUpti_ActivityOverhead cu_overhead;
#endif

/* The offsets read: the same in Kernel4..10, Memcpy4..6, Memset3/4,
 * Memory2..4, Synchronization/2, Device4/5, Overhead..3 (checked against
 * the CUPTI 13.0 headers). A header where one moves fails to build here
 * instead of reading garbage at run time. */
#define AT(T, f, o) _Static_assert(offsetof(T, f) == (o), #T "." #f " moved")
AT(cu_kernel, registersPerThread, 6);
AT(cu_kernel, start, 16);
AT(cu_kernel, end, 24);
AT(cu_kernel, deviceId, 40);
AT(cu_kernel, streamId, 48);
AT(cu_kernel, gridX, 52);
AT(cu_kernel, gridY, 56);
AT(cu_kernel, gridZ, 60);
AT(cu_kernel, blockX, 64);
AT(cu_kernel, blockY, 68);
AT(cu_kernel, blockZ, 72);
AT(cu_kernel, staticSharedMemory, 76);
AT(cu_kernel, dynamicSharedMemory, 80);
AT(cu_kernel, correlationId, 92);
AT(cu_kernel, name, 104);
AT(cu_memcpy, copyKind, 4);
AT(cu_memcpy, srcKind, 5);
AT(cu_memcpy, dstKind, 6);
AT(cu_memcpy, bytes, 8);
AT(cu_memcpy, start, 16);
AT(cu_memcpy, end, 24);
AT(cu_memcpy, deviceId, 32);
AT(cu_memcpy, streamId, 40);
AT(cu_memcpy, correlationId, 44);
AT(cu_memset, bytes, 8);
AT(cu_memset, start, 16);
AT(cu_memset, end, 24);
AT(cu_memset, deviceId, 32);
AT(cu_memset, streamId, 40);
AT(cu_memset, correlationId, 44);
AT(cu_memset, memoryKind, 50);
AT(cu_memory, memoryOperationType, 4);
AT(cu_memory, memoryKind, 8);
AT(cu_memory, correlationId, 12);
AT(cu_memory, address, 16);
AT(cu_memory, bytes, 24);
AT(cu_memory, timestamp, 32);
AT(cu_memory, deviceId, 52);
AT(cu_memory, streamId, 60);
AT(cu_sync, type, 4);
AT(cu_sync, start, 8);
AT(cu_sync, end, 16);
AT(cu_sync, correlationId, 24);
AT(cu_sync, streamId, 32);
AT(cu_device, globalMemorySize, 16);
AT(cu_device, numThreadsPerWarp, 32);
AT(cu_device, numMultiprocessors, 44);
AT(cu_device, maxWarpsPerMultiprocessor, 52);
AT(cu_device, maxBlocksPerMultiprocessor, 56);
AT(cu_device, maxSharedMemoryPerMultiprocessor, 60);
AT(cu_device, maxRegistersPerMultiprocessor, 64);
AT(cu_device, computeCapabilityMajor, 104);
AT(cu_device, id, 112);
AT(cu_device, name, 136);
AT(cu_overhead, overheadKind, 4);
AT(cu_overhead, start, 24);
AT(cu_overhead, end, 32);
AT(CUpti_ActivityAPI, cbid, 4);
AT(CUpti_ActivityAPI, start, 8);
AT(CUpti_ActivityAPI, end, 16);
AT(CUpti_ActivityAPI, threadId, 28);
AT(CUpti_ActivityAPI, correlationId, 32);
AT(CUpti_ActivityMemcpyPtoP4, bytes, 8);
AT(CUpti_ActivityMemcpyPtoP4, start, 16);
AT(CUpti_ActivityMemcpyPtoP4, end, 24);
#undef AT

#endif /* PROF_CUPTI_RECORDS_H */
