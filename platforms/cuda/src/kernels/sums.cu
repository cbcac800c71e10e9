/**
 * The end of every kernel that computes a CV: its sum and its gradient. Runtime flags (kernels/launch.cu) select what a launch does:
 *   DIRECT_FORCES    add -ds/dx to the force buffer (the energy is the CV itself)
 *   GRADIENT         add ds/dx to the fixed-point gradient buffer (GRADIENT_FIXED_POINT_UNIT), for the chain rule
 *                    (kernels/chainrule.cu) or applyGradient()
 *   BLOCK_ENERGY     add each block's sum of s to the energy buffer (the energy is the CV)
 *   REDUCE           the last block to finish sums the blocks' values into *cvValue
 *   ACCUMULATE       each block adds its sum of s to one double, the CV's sum that
 *                    applyChainRule() reads, without a last block's reduction in between
 */

/** Sum a value over the threads of a block (at most TILE); the result is valid in thread 0. */
inline DEVICE mixed blockSum(mixed value, mixed* scratch) {
    for (int offset = 16; offset > 0; offset /= 2)
        value += __shfl_down_sync(0xffffffff, value, offset);
    if (threadIdx.x%32 == 0)
        scratch[threadIdx.x/32] = value;
    __syncthreads();
    value = 0;
    if (threadIdx.x < 32) {
        value = (threadIdx.x < blockDim.x/32 ? scratch[threadIdx.x] : 0);
        for (int offset = 16; offset > 0; offset /= 2)
            value += __shfl_down_sync(0xffffffff, value, offset);
    }
    __syncthreads();
    return value;
}

/** Sum a vector over the 32 lanes of a warp; every lane gets the result. */
inline DEVICE real3 warpSum(real3 v) {
    for (int mask = 16; mask > 0; mask /= 2) {
        v.x += __shfl_xor_sync(0xffffffff, v.x, mask);
        v.y += __shfl_xor_sync(0xffffffff, v.y, mask);
        v.z += __shfl_xor_sync(0xffffffff, v.z, mask);
    }
    return v;
}

/** Add the gradient g of the CV with respect to one slot's particle, as the flags ask. */
inline DEVICE void addGradient(real3 g, int slot, int atom, int flags, unsigned long long* RESTRICT forceBuffer,
        long long* RESTRICT gradient, int numSlots) {
    if (flags & FLAG_DIRECT_FORCES) {
        atomicAdd(&forceBuffer[atom], (unsigned long long) realToFixedPoint(-g.x));
        atomicAdd(&forceBuffer[atom+PADDED_NUM_ATOMS], (unsigned long long) realToFixedPoint(-g.y));
        atomicAdd(&forceBuffer[atom+2*PADDED_NUM_ATOMS], (unsigned long long) realToFixedPoint(-g.z));
    }
    else {
        atomicAdd((unsigned long long*) &gradient[slot], (unsigned long long) gradientToFixedPoint(g.x));
        atomicAdd((unsigned long long*) &gradient[slot+numSlots], (unsigned long long) gradientToFixedPoint(g.y));
        atomicAdd((unsigned long long*) &gradient[slot+2*numSlots], (unsigned long long) gradientToFixedPoint(g.z));
    }
}

/**
 * Finish a launch: add the block's sum to the energy (BLOCK_ENERGY, recording a CV that is not
 * finite in record[] and raising the alarm, kernels/energy.cu); then either add it to *cvPartial
 * (ACCUMULATE), or let the last block reduce the blocks' sums in cvPartial into *cvValue (REDUCE).
 */
inline DEVICE void finishBlock(mixed cvSum, int flags, mixed* RESTRICT energyBuffer, double* RESTRICT cvPartial,
        unsigned int* RESTRICT counter, double* RESTRICT cvValue, double* RESTRICT record, int* RESTRICT alarm) {
    __shared__ mixed scratch[TILE/32];
    if (!(flags & (FLAG_BLOCK_ENERGY | FLAG_REDUCE | FLAG_ACCUMULATE)))
        return;
    mixed total = blockSum(cvSum, scratch);
    if (threadIdx.x == 0 && (flags & FLAG_BLOCK_ENERGY)) {
        double cv = total, energy = total, derivative = 1;
        recordNonFinite(record, 1, &cv, &energy, &derivative, alarm);
        atomicAdd(&energyBuffer[blockIdx.x], (mixed) energy);
    }
    if (threadIdx.x == 0 && (flags & FLAG_ACCUMULATE))
        atomicAdd(cvPartial, (double) total);
    if (!(flags & FLAG_REDUCE))
        return;
    if (threadIdx.x == 0)
        cvPartial[blockIdx.x] = total;
    if (!isLastBlockToFinish(counter))
        return;
    mixed sum = 0;
    for (int i = threadIdx.x; i < gridDim.x; i += blockDim.x)
        sum += __ldcg(&cvPartial[i]);
    sum = blockSum(sum, scratch);
    if (threadIdx.x == 0)
        *cvValue = sum;
}
