#ifndef OPENMM_COORDINATION_CV_STATISTICS_H_
#define OPENMM_COORDINATION_CV_STATISTICS_H_

#include <algorithm>
#include <vector>

namespace CoordinationPlugin {

/**
 * The running statistics of a CoordinationBiasForce's CVs in one Context (setCVStatisticsStride()),
 * as the host keeps them: the Reference and CPU kernels hold them here, the CUDA kernel only the
 * stride and the step last counted (the values live on the device, kernels/chainrule.cu, whose
 * updateCVStatistics() is the same update in device code). PLUMED's OPES_METAD update (Welford's,
 * with tau = min(count, stride)).
 */
struct CoordinationCVStatistics {
    /** tau's largest value (0: no statistics are kept). */
    int stride = 0;
    /**
     * The step counted last, or the Context's step where the statistics were set; before the first
     * evaluation, none (started false): the step of that evaluation, the Context's first, is not counted.
     */
    long long step = 0;
    bool started = false;
    /** The number of steps counted. */
    long long count = 0;
    /** The running mean and the sum of squared deviations of each CV. */
    std::vector<double> mean, m2;
    /** Start with no samples; the step of the next evaluation is not counted. */
    void reset(int numCVs) {
        mean.assign(numCVs, 0.0);
        m2.assign(numCVs, 0.0);
        count = 0;
        started = false;
    }
    /** Mark the Context's current step as counted (the statistics were set there). */
    void setStep(long long currentStep) {
        step = currentStep;
        started = true;
    }
    /** Whether an evaluation at currentStep is the first of a step not counted yet; if so, it is now marked counted. */
    bool takeStep(long long currentStep) {
        if (stride <= 0 || (started && currentStep == step))
            return false;
        bool counted = started;
        setStep(currentStep);
        return counted;
    }
    /** Add one sample, the CVs of a step (PLUMED's update). */
    void add(const std::vector<double>& cv) {
        add(cv, count, mean, m2, stride);
    }
    /** The update on given statistics: what the CUDA kernel's host side applies where it counts a step itself. */
    static void add(const std::vector<double>& cv, long long& count, std::vector<double>& mean, std::vector<double>& m2, int stride) {
        count++;
        const double tau = (double) std::min(count, (long long) stride);
        for (int k = 0; k < cv.size(); k++) {
            const double difference = cv[k]-mean[k];
            mean[k] += difference/tau;
            m2[k] += difference*(cv[k]-mean[k]);
        }
    }
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_CV_STATISTICS_H_*/
