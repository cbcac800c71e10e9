/**
 * The chain rule's last step in OpenMM's bonded kernel (CudaCoordinationBondedChainRule): this file
 * and energy.cu are prefix code of OpenMM's computeBondedForces, whose loop over a CV's entries
 * calls bondedChainRuleForce() for entry `index` and adds the force it returns to atom1.
 */

/**
 * The force of entry `index` of one CV's fixed-point gradient: -dE/dcv times the entry, which it
 * clears (takeGradientEntry()), with *atom set to the entry's particle; zero where the entry is zero
 * (then *atom is left as it is). target: where the last evaluation left the CV's gradient, as
 * {gradient, groupAtoms, entrySlot, numSlots} (a gradient of 0: none); dEdcv: the CV's dE/dcv in the
 * state, which the chain rule stored in the same evaluation.
 */
inline DEVICE real3 bondedChainRuleForce(const long long* RESTRICT target, const double* RESTRICT dEdcv, unsigned int index,
        unsigned int* atom) {
    real3 force = make_real3(0, 0, 0);
    long long* gradient = (long long*) target[0];
    if (gradient == NULL)
        return force;
    const int* entrySlot = (const int*) target[2];
    if (takeGradientEntry(gradient, (int) index, (int) target[3], chainRuleScale(*dEdcv), &force))
        *atom = ((const int*) target[1])[entrySlot == NULL ? index : entrySlot[index]];
    return force;
}
