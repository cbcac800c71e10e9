// What the neighbour lists' two binning launches cost a GPU-bound step when they return at once,
// and whether a CUDA graph whose conditional node (CUDA 12.4+, cudaGraphSetConditional from the
// check) skips them costs less. A model, not the plugin: a spin kernel of about 150 us on every
// multiprocessor stands for OpenMM's step; `check` (31 blocks reading 7,894 float4, as the self-
// coordination's checkNeighborList) asks for a rebuild one step in 15; the two `binning` launches
// spin 20 us where it did, else return at once; `list` spins 8 us on 31 blocks. Seven ways of
// launching them, 2,000 steps a timing, 5 rounds, medians. Build and run on a machine with a GPU:
//     nvcc -O2 -arch=sm_90 -o /tmp/graph_probe benchmarks/graph_probe.cu && /tmp/graph_probe 2000
// docs/cuda-implementation.md ("A CUDA graph with a conditional node") has its results.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s (line %d)\n", #x, cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

__device__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) ;
}
__global__ void md(long long cycles) { spin(cycles); }
// The check's work: read the positions, then block 0's first thread counts the step and sets the
// flag (a rebuild one step in `period`); returns the flag there, -1 in every other thread.
__device__ int checkPositions(int* counter, int* flag, int period, const float4* pos, int n) {
    float s = 0;
    for (int i = blockIdx.x*blockDim.x+threadIdx.x; i < n; i += blockDim.x*gridDim.x) s += pos[i].x;
    if (s == 12345.f) flag[1] = 1;
    __syncthreads();
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return -1;
    int f = (atomicAdd(counter, 1) % period == 0);
    *flag = f;
    return f;
}
__global__ void check(int* counter, int* flag, int period, cudaGraphConditionalHandle handle, int useHandle, const float4* pos, int n) {
    int f = checkPositions(counter, flag, period, pos, n);
    if (f >= 0 && useHandle) cudaGraphSetConditional(handle, f);
}
__global__ void binning(const int* flag, long long cycles) { if (*flag) spin(cycles); }
__global__ void list(long long cycles) { spin(cycles); }
__global__ void binningPdl(const int* flag, long long cycles) { cudaGridDependencySynchronize(); if (*flag) spin(cycles); }
__global__ void listPdl(long long cycles) { cudaGridDependencySynchronize(); spin(cycles); }
__global__ void checkPdl(int* counter, int* flag, int period, const float4* pos, int n) {
    cudaGridDependencySynchronize();
    checkPositions(counter, flag, period, pos, n);
}
template <class... Args> void launchPdl(void (*kernel)(Args...), int blocks, cudaStream_t stream, Args... args) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks); config.blockDim = dim3(256); config.stream = stream;
    cudaLaunchAttribute attribute;
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &attribute; config.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&config, kernel, args...));
}

int main(int argc, char** argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 2000;
    double clockGHz = 1.755;
    cudaDeviceProp prop; CHECK(cudaGetDeviceProperties(&prop, 0));
    int sms = prop.multiProcessorCount;
    long long mdCycles = (long long) (150*1000*clockGHz), listCycles = (long long) (8*1000*clockGHz), binCycles = (long long) (20*1000*clockGHz);
    int *counter, *flag; float4* pos; int n = 7894;
    CHECK(cudaMalloc(&counter, 4)); CHECK(cudaMalloc(&flag, 8)); CHECK(cudaMalloc(&pos, n*sizeof(float4)));
    CHECK(cudaMemset(counter, 0, 4)); CHECK(cudaMemset(flag, 0, 8)); CHECK(cudaMemset(pos, 0, n*sizeof(float4)));
    cudaStream_t stream; CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int period = 15, blocks = 31;
    cudaGraphConditionalHandle none = 0;

    // The graph: check -> if (flag) {binning, binning} -> list.
    cudaGraph_t graph; CHECK(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle handle;
    CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 0, cudaGraphCondAssignDefault));
    int one = 1, zero = 0;
    void* checkArgs[] = {&counter, &flag, &period, &handle, &one, &pos, &n};
    cudaKernelNodeParams kp = {};
    kp.func = (void*) check; kp.gridDim = dim3(blocks); kp.blockDim = dim3(256); kp.kernelParams = checkArgs;
    cudaGraphNode_t checkNode, condNode, listNode, b1, b2;
    CHECK(cudaGraphAddKernelNode(&checkNode, graph, nullptr, 0, &kp));
    cudaGraphNodeParams cp = {};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = handle; cp.conditional.type = cudaGraphCondTypeIf; cp.conditional.size = 1;
    CHECK(cudaGraphAddNode(&condNode, graph, &checkNode, nullptr, 1, &cp));
    cudaGraph_t body = cp.conditional.phGraph_out[0];
    void* binArgs[] = {&flag, &binCycles};
    kp.func = (void*) binning; kp.gridDim = dim3(blocks); kp.kernelParams = binArgs;
    CHECK(cudaGraphAddKernelNode(&b1, body, nullptr, 0, &kp));
    CHECK(cudaGraphAddKernelNode(&b2, body, &b1, 1, &kp));
    void* listArgs[] = {&listCycles};
    kp.func = (void*) list; kp.gridDim = dim3(blocks); kp.kernelParams = listArgs;
    CHECK(cudaGraphAddKernelNode(&listNode, graph, &condNode, 1, &kp));
    cudaGraphExec_t exec; CHECK(cudaGraphInstantiate(&exec, graph, 0));

    // The same four kernels as a plain graph (no conditional).
    cudaGraph_t graph4; CHECK(cudaGraphCreate(&graph4, 0));
    void* checkArgs0[] = {&counter, &flag, &period, &none, &zero, &pos, &n};
    cudaGraphNode_t n1, n2, n3, n4;
    kp.func = (void*) check; kp.kernelParams = checkArgs0;
    CHECK(cudaGraphAddKernelNode(&n1, graph4, nullptr, 0, &kp));
    kp.func = (void*) binning; kp.kernelParams = binArgs;
    CHECK(cudaGraphAddKernelNode(&n2, graph4, &n1, 1, &kp));
    CHECK(cudaGraphAddKernelNode(&n3, graph4, &n2, 1, &kp));
    kp.func = (void*) list; kp.kernelParams = listArgs;
    CHECK(cudaGraphAddKernelNode(&n4, graph4, &n3, 1, &kp));
    cudaGraphExec_t exec4; CHECK(cudaGraphInstantiate(&exec4, graph4, 0));

    const char* names[] = {"plain (md kernel only)", "stream: check, 2 binning, list", "stream: check, list (no binning launches)", "graph: check, if {2 binning}, list", "graph: check, 2 binning, list", "stream, dependent launches: check, 2 binning, list", "stream, dependent launches: check, list"};
    cudaEvent_t e0, e1; CHECK(cudaEventCreate(&e0)); CHECK(cudaEventCreate(&e1));
    const int cases = 7;
    std::vector<std::vector<float>> times(cases);
    for (int round = 0; round < 5; round++)
        for (int c = 0; c < cases; c++) {
            for (int pass = 0; pass < 2; pass++) {  // the first pass warms up
                CHECK(cudaEventRecord(e0, stream));
                for (int s = 0; s < steps; s++) {
                    md<<<sms, 256, 0, stream>>>(mdCycles);
                    if (c == 1 || c == 2) {
                        check<<<blocks, 256, 0, stream>>>(counter, flag, period, none, 0, pos, n);
                        if (c == 1) {
                            binning<<<blocks, 256, 0, stream>>>(flag, binCycles);
                            binning<<<blocks, 256, 0, stream>>>(flag, binCycles);
                        }
                        list<<<blocks, 256, 0, stream>>>(listCycles);
                    }
                    else if (c == 3) CHECK(cudaGraphLaunch(exec, stream));
                    else if (c == 4) CHECK(cudaGraphLaunch(exec4, stream));
                    else if (c >= 5) {
                        launchPdl(checkPdl, blocks, stream, counter, flag, period, (const float4*) pos, n);
                        if (c == 5) {
                            launchPdl(binningPdl, blocks, stream, (const int*) flag, binCycles);
                            launchPdl(binningPdl, blocks, stream, (const int*) flag, binCycles);
                        }
                        launchPdl(listPdl, blocks, stream, listCycles);
                    }
                }
                CHECK(cudaEventRecord(e1, stream));
                CHECK(cudaEventSynchronize(e1));
                CHECK(cudaGetLastError());
                float ms; CHECK(cudaEventElapsedTime(&ms, e0, e1));
                if (pass == 1) times[c].push_back(1000*ms/steps);
            }
        }
    float plain;
    for (int c = 0; c < cases; c++) {
        std::vector<float> t = times[c]; std::sort(t.begin(), t.end());
        if (c == 0) plain = t[2];
        printf("%-45s median %.2f us a step (min %.2f, max %.2f), +%.2f us over plain\n", names[c], t[2], t[0], t[4], t[2]-plain);
    }
    int count; CHECK(cudaMemcpy(&count, counter, 4, cudaMemcpyDeviceToHost));
    printf("check ran %d times; rebuild one step in %d (binning spins 20 us a launch then)\n", count, period);
    return 0;
}
