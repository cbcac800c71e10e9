/**
 * The launch flags of the coordination and chain-rule kernels (kernels/coordination.cu and
 * kernels/energy.cu say what each does).
 */
#define FLAG_DIRECT_FORCES 1
#define FLAG_GRADIENT 2
#define FLAG_BLOCK_ENERGY 4
#define FLAG_REDUCE 8
#define FLAG_EXPRESSION_ENERGY 16
#define FLAG_ACCUMULATE 32

/**
 * The start of every kernel that CudaCoordinationLauncher launches: let the next kernel launch
 * (programmatic dependent launch, sm_90 and later), then wait until the kernel before this one
 * has finished and its writes are visible. Nothing is read before.
 */
#if __CUDA_ARCH__ >= 900
#define DEPENDENT_KERNEL_START asm volatile("griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;" ::: "memory");
#else
#define DEPENDENT_KERNEL_START
#endif
