/*
 * Counts the CUDA driver calls of a process that matter for the fixed cost of a force: kernel
 * launches (by kernel name, with the host time spent in the driver's launch call), host
 * synchronizations (blocking device-to-host copies and stream, context and event
 * synchronizations) and host-to-device copies. Loaded with LD_PRELOAD in front
 * of libcuda, it forwards every call to the driver and counts it; benchmarks/profile_launches.py
 * reads and resets the counts through ctypes around a window of MD steps.
 *
 *   gcc -O2 -shared -fPIC -I/usr/local/cuda/include benchmarks/cuda_calls.c -o cuda_calls.so -ldl
 *   LD_PRELOAD=$PWD/cuda_calls.so python3 benchmarks/profile_launches.py ...
 *
 * cuda_calls_range_push/pop open and close an NVTX range, so that Nsight Compute profiles the same
 * window (ncu --nvtx --nvtx-include "window/"). A measuring tool only: nothing of the plugin uses it.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#define MAX_NAMES 512
#define NAME_LENGTH 160

/* What is counted; cuda_calls_counts() returns them in this order. */
enum {LAUNCHES, SYNC_COPIES, ASYNC_COPIES_TO_HOST, STREAM_SYNCS, CONTEXT_SYNCS, EVENT_SYNCS, COPIES_TO_DEVICE, NUM_COUNTS};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long long counts[NUM_COUNTS];
static char names[MAX_NAMES][NAME_LENGTH];
static long long nameCounts[MAX_NAMES], nameNanoseconds[MAX_NAMES];
static int numNames;

/* The driver's own function: libcuda is loaded as a dependency of OpenMM's CUDA plugin, which
 * OpenMM opens with RTLD_LOCAL, so RTLD_NEXT would not find it. */
static void* next(const char* symbol) {
    static void* driver = NULL;
    if (driver == NULL)
        driver = dlopen("libcuda.so.1", RTLD_NOW);
    return dlsym(driver, symbol);
}

static void count(int what) {
    __atomic_add_fetch(&counts[what], 1, __ATOMIC_RELAXED);
}

static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1000000000LL*t.tv_sec+t.tv_nsec;
}

/* Count a launch of f; returns the index of its name (or MAX_NAMES), for addLaunchTime(). */
static int countLaunch(CUfunction f) {
    static CUresult (*getName)(const char**, CUfunction) = NULL;
    const char* name = "?";
    if (getName == NULL)
        getName = (CUresult (*)(const char**, CUfunction)) next("cuFuncGetName");
    if (getName == NULL || getName(&name, f) != CUDA_SUCCESS || name == NULL)
        name = "?";
    count(LAUNCHES);
    pthread_mutex_lock(&lock);
    int i;
    for (i = 0; i < numNames && strncmp(names[i], name, NAME_LENGTH-1) != 0; i++)
        ;
    if (i == numNames && numNames < MAX_NAMES) {
        strncpy(names[i], name, NAME_LENGTH-1);
        numNames++;
    }
    if (i < MAX_NAMES)
        nameCounts[i]++;
    pthread_mutex_unlock(&lock);
    return i;
}

/* The host time of a launch of kernel name i, from start (now()) to the driver's return. */
static void addLaunchTime(int i, long long start) {
    if (i < MAX_NAMES)
        __atomic_add_fetch(&nameNanoseconds[i], now()-start, __ATOMIC_RELAXED);
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
        unsigned int bz, unsigned int sharedMem, CUstream stream, void** params, void** extra) {
    static CUresult (*real)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
            unsigned int, CUstream, void**, void**) = NULL;
    if (real == NULL)
        real = next("cuLaunchKernel");
    int i = countLaunch(f);
    long long start = now();
    CUresult result = real(f, gx, gy, gz, bx, by, bz, sharedMem, stream, params, extra);
    addLaunchTime(i, start);
    return result;
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
    static CUresult (*real)(const CUlaunchConfig*, CUfunction, void**, void**) = NULL;
    if (real == NULL)
        real = next("cuLaunchKernelEx");
    int i = countLaunch(f);
    long long start = now();
    CUresult result = real(config, f, params, extra);
    addLaunchTime(i, start);
    return result;
}

CUresult CUDAAPI cuMemcpyDtoH(void* host, CUdeviceptr device, size_t bytes) {
    static CUresult (*real)(void*, CUdeviceptr, size_t) = NULL;
    if (real == NULL)
        real = next("cuMemcpyDtoH_v2");
    count(SYNC_COPIES);
    return real(host, device, bytes);
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void* host, CUdeviceptr device, size_t bytes, CUstream stream) {
    static CUresult (*real)(void*, CUdeviceptr, size_t, CUstream) = NULL;
    if (real == NULL)
        real = next("cuMemcpyDtoHAsync_v2");
    count(ASYNC_COPIES_TO_HOST);
    return real(host, device, bytes, stream);
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr device, const void* host, size_t bytes) {
    static CUresult (*real)(CUdeviceptr, const void*, size_t) = NULL;
    if (real == NULL)
        real = next("cuMemcpyHtoD_v2");
    count(COPIES_TO_DEVICE);
    return real(device, host, bytes);
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr device, const void* host, size_t bytes, CUstream stream) {
    static CUresult (*real)(CUdeviceptr, const void*, size_t, CUstream) = NULL;
    if (real == NULL)
        real = next("cuMemcpyHtoDAsync_v2");
    count(COPIES_TO_DEVICE);
    return real(device, host, bytes, stream);
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream) {
    static CUresult (*real)(CUstream) = NULL;
    if (real == NULL)
        real = next("cuStreamSynchronize");
    count(STREAM_SYNCS);
    return real(stream);
}

CUresult CUDAAPI cuCtxSynchronize(void) {
    static CUresult (*real)(void) = NULL;
    if (real == NULL)
        real = next("cuCtxSynchronize");
    count(CONTEXT_SYNCS);
    return real();
}

CUresult CUDAAPI cuEventSynchronize(CUevent event) {
    static CUresult (*real)(CUevent) = NULL;
    if (real == NULL)
        real = next("cuEventSynchronize");
    count(EVENT_SYNCS);
    return real(event);
}

/* The counts since the last reset, in the order of the enum above. */
void cuda_calls_counts(long long* out) {
    for (int i = 0; i < NUM_COUNTS; i++)
        out[i] = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
}

/* The number of kernel names seen; name i and its launches since the last reset. */
int cuda_calls_num_names(void) {
    return numNames;
}

const char* cuda_calls_name(int i, long long* launches) {
    *launches = nameCounts[i];
    return names[i];
}

/* The host time (nanoseconds) spent in the driver's launch calls of kernel name i since the last reset. */
long long cuda_calls_name_nanoseconds(int i) {
    return __atomic_load_n(&nameNanoseconds[i], __ATOMIC_RELAXED);
}

void cuda_calls_reset(void) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < NUM_COUNTS; i++)
        counts[i] = 0;
    for (int i = 0; i < numNames; i++)
        nameCounts[i] = nameNanoseconds[i] = 0;
    pthread_mutex_unlock(&lock);
}

/* An NVTX range around the counted window, for ncu --nvtx --nvtx-include "name/". */
void cuda_calls_range_push(const char* name) {
    nvtxRangePushA(name);
}

void cuda_calls_range_pop(void) {
    nvtxRangePop();
}
