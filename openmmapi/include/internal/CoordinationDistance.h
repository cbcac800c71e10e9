#ifndef OPENMM_COORDINATION_DISTANCE_H_
#define OPENMM_COORDINATION_DISTANCE_H_

#include "openmm/Vec3.h"
#include <cmath>
#include <vector>

namespace CoordinationPlugin {

/**
 * A distance collective variable of a CoordinationBiasForce (addDistance()), and its value on the
 * host: the one host copy of the math, used by the Reference and CPU kernels and by the CUDA
 * kernel's getCollectiveVariableValues() (the device's copy is in kernels/chainrule.cu).
 */
struct CoordinationDistance {
    /** The two particles: the CV is a function of r = r2 - r1. */
    int particle1 = 0, particle2 = 0;
    /** -1 for the length |r|, 0, 1 or 2 for r's x, y or z component. */
    int component = -1;
    /**
     * Whether r is the nearest periodic image: the shortest of the images of r2 - r1 (PLUMED's DISTANCE,
     * and the pairs of a CoordinationForce). The box is in OpenMM's reduced form; in a triclinic box
     * the image that reduction gives is the nearest only up to half the smallest box width, so its 26
     * neighbours are searched.
     */
    bool usePeriodic = true;

    /**
     * The value at positions pos in a box (three vectors in OpenMM's reduced form, used only if
     * usePeriodic), and, where dvaluedr is not NULL, its derivative with respect to r2 (that with
     * respect to r1 is minus it).
     */
    double compute(const std::vector<OpenMM::Vec3>& pos, const OpenMM::Vec3* box, OpenMM::Vec3* dvaluedr) const {
        OpenMM::Vec3 r = pos[particle2]-pos[particle1];
        if (usePeriodic) {
            r -= box[2]*std::floor(r[2]/box[2][2]+0.5);
            r -= box[1]*std::floor(r[1]/box[1][1]+0.5);
            r -= box[0]*std::floor(r[0]/box[0][0]+0.5);
            if (box[1][0] != 0 || box[2][0] != 0 || box[2][1] != 0) {
                const OpenMM::Vec3 reduced = r;
                for (int a = -1; a <= 1; a++)
                    for (int b = -1; b <= 1; b++)
                        for (int c = -1; c <= 1; c++) {
                            OpenMM::Vec3 image = reduced+box[0]*a+box[1]*b+box[2]*c;
                            if (image.dot(image) < r.dot(r))
                                r = image;
                        }
            }
        }
        double value = (component < 0 ? std::sqrt(r.dot(r)) : r[component]);
        if (dvaluedr != NULL) {
            *dvaluedr = OpenMM::Vec3();
            if (component < 0)
                *dvaluedr = r/value;
            else
                (*dvaluedr)[component] = 1.0;
        }
        return value;
    }
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_DISTANCE_H_*/
