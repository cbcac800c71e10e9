/**
 * The launch flags of the coordination and chain-rule kernels (kernels/sums.cu and
 * kernels/chainrule.cu say what each does).
 */
#define FLAG_DIRECT_FORCES 1
#define FLAG_GRADIENT 2
#define FLAG_BLOCK_ENERGY 4
#define FLAG_REDUCE 8
#define FLAG_EXPRESSION_ENERGY 16
#define FLAG_ACCUMULATE 32
/** The chain rule adds this evaluation's CVs to their running statistics (kernels/chainrule.cu); a high bit, apart from the pair kernels'. */
#define FLAG_CV_STATISTICS 1024

/**
 * The start of every kernel that CudaCoordinationLauncher launches (programmatic dependent
 * launch, sm_90 and later): first wait until the kernel before this one has finished and its
 * writes are visible (griddepcontrol.wait), and only then let the next kernel launch
 * (griddepcontrol.launch_dependents). Nothing is read before. In that order at most two kernels
 * of a stream are in flight, this one running and the next one waiting, so every kernel also sees
 * the writes of all kernels before its predecessor. The other order (launch the next kernel,
 * then wait) let a chain of waiting kernels build up, and under CUDA MPS the chain rule then read
 * the CV sums and gradients of a list kernel that had not finished (docs/cuda-implementation.md,
 * "Ordering").
 */
#if __CUDA_ARCH__ >= 900
#define DEPENDENT_KERNEL_START asm volatile("griddepcontrol.wait;\n\tgriddepcontrol.launch_dependents;" ::: "memory");
#else
#define DEPENDENT_KERNEL_START
#endif
