/** The kernels every CV's module holds: the forces from a gradient, and the particles' places after a reorder. */

/**
 * Add the accumulated gradient of the CV to the forces as -dcv/dx (the energy is the CV) and
 * clear it: the cell kernel's forces of a large group, by sorted index (entrySlot).
 */
KERNEL void applyGradient(const int* RESTRICT groupAtoms, const int* RESTRICT entrySlot, int numSlots, long long* RESTRICT gradient,
        unsigned long long* RESTRICT forceBuffer) {
    DEPENDENT_KERNEL_START
    scatterGradient(gradient, groupAtoms, entrySlot, numSlots, chainRuleScale(1.0), forceBuffer, 0);
}

/** After atoms are reordered: inverse[atomIndex[i]] = i. */
KERNEL void invertAtomIndex(const int* RESTRICT atomIndex, int* RESTRICT inverse, int numAtoms) {
    for (int i = blockIdx.x*blockDim.x+threadIdx.x; i < numAtoms; i += blockDim.x*gridDim.x)
        inverse[atomIndex[i]] = i;
}

/** After atoms are reordered: where each slot's particle now is. */
KERNEL void updateGroupAtoms(const int* RESTRICT groupOriginal, const int* RESTRICT inverse, int* RESTRICT groupAtoms, int numSlots) {
    for (int k = blockIdx.x*blockDim.x+threadIdx.x; k < numSlots; k += blockDim.x*gridDim.x)
        groupAtoms[k] = inverse[groupOriginal[k]];
}

/** checkSlotPositions() (energy.cu) on its own: before the histograms, which check no positions themselves. */
KERNEL void checkPositions(const real4* RESTRICT posq, const int* RESTRICT groupAtoms, int numSlots, int* RESTRICT firstInvalid,
        int* RESTRICT alarm, mixed* RESTRICT energyBuffer) {
    checkSlotPositions(posq, groupAtoms, numSlots, firstInvalid, alarm, energyBuffer);
}
