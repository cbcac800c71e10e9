/**
 * The energy of NUM_CVS collective variables and the chain rule: the one device home of both,
 * for a CoordinationForce with an energy expression (one CV named cv) and a CoordinationBiasForce
 * (several). Each CV's pair kernel accumulates its sum into cvSums[k] and its gradient dcv_k/dx,
 * in 64-bit fixed point, into a buffer of its own; applyChainRule() evaluates E and every dE/dcv_k
 * once and adds -dE/dcv_k times each gradient to the forces.
 *
 * The state the host reads back in one download (CudaCoordinationEnergy), for K CVs:
 *   state[k]          CV k (the chain rule, or a pair kernel's REDUCE)          k < K
 *   state[K+k]        dE/dcv_k
 *   state[2K...]      the record of the first energy or dE/dcv that was not finite:
 *                     a flag, E, the K CVs and the K dE/dcv_k there (recordNonFinite())
 *   state[4K+2+k]     the first slot of CV k whose particle's position is not finite (an int)
 *   state[5K+2...]    the running statistics of the CVs (updateCVStatistics(), chainrule.cu):
 *                     the K means, the K sums of squared deviations m2, the count and the stride
 *
 * Whatever is recorded there also raises the alarm, an int in mapped host memory that the host
 * reads without waiting for the GPU (raiseAlarm()): the host looks at the state only once the
 * alarm is up, so that no evaluation waits for the GPU to check its values.
 */

/**
 * Tell the host that something was recorded in the state: a plain store to mapped host memory
 * (no atomics over the bus), made visible to the host before anything this thread writes later.
 */
inline DEVICE void raiseAlarm(int* alarm) {
    *(volatile int*) alarm = 1;
    __threadfence_system();
}

/**
 * Where an energy or a dE/dcv_k is not finite (a NaN global parameter, an overflow, a CV that
 * is not finite), record the first such one in record[] (a flag, E, the numCVs CVs and dE/dcv_k)
 * for the host's error, raise the alarm, make every dE/dcv_k zero, so that nothing that is not
 * finite reaches the forces, and the energy NaN, so that an energy read of this evaluation is
 * never a wrong finite number (the host throws at its next call, CudaCoordinationEnergy).
 */
inline DEVICE void recordNonFinite(double* RESTRICT record, int numCVs, const double* cv, double* energy, double* dEdcv,
        int* alarm) {
    bool finite = isfinite(*energy);
    for (int k = 0; k < numCVs; k++)
        finite = finite && isfinite(dEdcv[k]);
    if (finite)
        return;
    if (atomicCAS((unsigned long long*) &record[0], 0ULL, (unsigned long long) __double_as_longlong(1.0)) == 0ULL) {
        record[1] = *energy;
        for (int k = 0; k < numCVs; k++) {
            record[2+k] = cv[k];
            record[2+numCVs+k] = dEdcv[k];
        }
    }
    raiseAlarm(alarm);
    *energy = __longlong_as_double(0x7ff8000000000000LL);
    for (int k = 0; k < numCVs; k++)
        dEdcv[k] = 0;
}

/**
 * The unit of the CVs' fixed-point gradient buffers (addGradient() writes them, scatterGradient()
 * reads them): 2^-32, OpenMM's force unit, in single and mixed precision; 2^-40 in double
 * precision, where the gradient's own truncation, times dE/dcv in the chain rule, would otherwise
 * be a force error of the order of the force buffer's (docs/cuda-implementation.md, "Precision").
 * A component of one CV's gradient with respect to one particle holds up to 2^23 (8.4e6 /nm) there,
 * 2^31 in the other precisions.
 */
#ifdef USE_DOUBLE_PRECISION
#define GRADIENT_FIXED_POINT_UNIT ((double) 0x10000000000LL)
#else
#define GRADIENT_FIXED_POINT_UNIT ((double) 0x100000000LL)
#endif

/** A gradient component in the gradient buffers' fixed point (GRADIENT_FIXED_POINT_UNIT). */
inline DEVICE long long gradientToFixedPoint(real g) {
    return (long long) (g*(real) GRADIENT_FIXED_POINT_UNIT);
}

/**
 * Take entry `entry` of a fixed-point gradient (numSlots entries a component): where it is not zero,
 * set *force to scale times it, clear it and return true; else return false.
 */
inline DEVICE bool takeGradientEntry(long long* RESTRICT gradient, int entry, int numSlots, real scale, real3* force) {
    const long long gx = gradient[entry], gy = gradient[entry+numSlots], gz = gradient[entry+2*numSlots];
    if ((gx | gy | gz) == 0)
        return false;
    *force = make_real3(scale*(real) gx, scale*(real) gy, scale*(real) gz);
    gradient[entry] = 0;
    gradient[entry+numSlots] = 0;
    gradient[entry+2*numSlots] = 0;
    return true;
}

/**
 * Add scale times one CV's fixed-point gradient to the forces and clear the gradient, over the
 * entries of this thread (a grid-stride loop; takeGradientEntry()). Entry k of the gradient belongs
 * to slot k, or with entrySlot (the cell kernel's sorted order) to slot entrySlot[k]. The particle
 * index of the next entry loads ahead. offset: where the gradient's first entry is in the order the
 * grid's threads take them (the entries of the gradients scattered before it in the same launch,
 * scatterChainRule()), so that several gradients are spread over the threads as one.
 */
inline DEVICE void scatterGradient(long long* RESTRICT gradient, const int* RESTRICT groupAtoms, const int* RESTRICT entrySlot,
        int numSlots, real scale, unsigned long long* RESTRICT forceBuffer, int offset) {
    const int stride = blockDim.x*gridDim.x, first = (int) ((blockIdx.x*blockDim.x+threadIdx.x+stride-offset%stride)%stride);
    int nextAtom = (first < numSlots ? groupAtoms[entrySlot == NULL ? first : entrySlot[first]] : 0);
    for (int entry = first; entry < numSlots; entry += stride) {
        const int atom = nextAtom;
        const int next = entry+stride;
        if (next < numSlots)
            nextAtom = groupAtoms[entrySlot == NULL ? next : entrySlot[next]];
        real3 f;
        if (!takeGradientEntry(gradient, entry, numSlots, scale, &f))
            continue;
        atomicAdd(&forceBuffer[atom], (unsigned long long) realToFixedPoint(f.x));
        atomicAdd(&forceBuffer[atom+PADDED_NUM_ATOMS], (unsigned long long) realToFixedPoint(f.y));
        atomicAdd(&forceBuffer[atom+2*PADDED_NUM_ATOMS], (unsigned long long) realToFixedPoint(f.z));
    }
}

/**
 * The position p of slot `slot` is not finite: record the smallest such slot in *firstInvalid,
 * raise the alarm, and, where the energy is read in this evaluation (energyBuffer not NULL), make
 * it NaN, since the pair kernels leave such a particle's pairs out (their distance compares false).
 */
inline DEVICE void checkPosition(real4 p, int slot, int* RESTRICT firstInvalid, int* RESTRICT alarm, mixed* RESTRICT energyBuffer) {
    if (isfinite(p.x) && isfinite(p.y) && isfinite(p.z))
        return;
    atomicMin(firstInvalid, slot);
    raiseAlarm(alarm);
    if (energyBuffer != NULL)
        atomicAdd(&energyBuffer[0], (mixed) __longlong_as_double(0x7ff8000000000000LL));
}

/**
 * checkPosition() for every slot (a grid-stride loop): the checkPositions kernel, and the start of
 * the pair kernels that check the positions of their CV themselves (firstInvalid not NULL), so
 * that an evaluation that checks them needs no launch of its own for it.
 */
inline DEVICE void checkSlotPositions(const real4* RESTRICT posq, const int* RESTRICT groupAtoms, int numSlots,
        int* RESTRICT firstInvalid, int* RESTRICT alarm, mixed* RESTRICT energyBuffer) {
    for (int k = blockIdx.x*blockDim.x+threadIdx.x; k < numSlots; k += blockDim.x*gridDim.x)
        checkPosition(posq[groupAtoms[k]], k, firstInvalid, alarm, energyBuffer);
}

/** The scale that turns a fixed-point gradient (GRADIENT_FIXED_POINT_UNIT) into -dE/dcv times it. */
inline DEVICE real chainRuleScale(double dEdcv) {
    return (real) (-dEdcv/GRADIENT_FIXED_POINT_UNIT);
}
