#ifndef OPENMM_COORDINATION_FORCE_H_
#define OPENMM_COORDINATION_FORCE_H_

#include "openmm/Context.h"
#include "openmm/Force.h"
#include "openmm/TabulatedFunction.h"
#include "internal/windowsExportCoordination.h"
#include <limits>
#include <string>
#include <vector>

namespace CoordinationPlugin {

class CoordinationForceImpl;

/**
 * A coordination number: a smooth count of the particle pairs closer than a switching
 * distance, as PLUMED's COORDINATION computes it,
 *
 *     cv = sum over the force's pairs (i, j) of s(r_ij),
 *
 * with r_ij in nm (nearest periodic image when periodic boundary conditions are used) and
 * s a switching function of x = (r - d0)/r0 that is 1 for r <= d0 (Q: r < d0) and 0 for r >= dmax,
 * as PLUMED 2.10 gives at the ends.
 *
 * The pairs come from one of three modes:
 * - one group G: every unordered pair i < j of G, each once;
 * - two groups A, B: every (i in A, j in B); a pair of identical particle indices is skipped;
 * - pair list: (A[k], B[k]) for each k.
 *
 * The force's energy (kJ/mol) is the CV itself unless an energy expression E(cv) is given,
 * for example "0.5*k*(cv-cv0)^2" with global parameters k and cv0 (which become Context
 * parameters) or "bias(cv)" with a Continuous1DFunction table named "bias". The forces are
 * -dE/dcv times dcv/dx. On a GPU the whole chain stays on the device. An energy or dE/dcv that
 * is not finite (a NaN global parameter, say) is an OpenMMException when the energy or forces
 * are read, as is a position that is not finite. On CUDA no evaluation waits for the GPU to
 * check its values: the energy read of an evaluation that met one is NaN, and the next call
 * that evaluates the force (the next energy read, step or CV) throws.
 *
 * In pair-list mode each pair k may carry a weight w_k and its own r0_k (setPairs()): then
 * cv = sum over k of w_k s_k(r_k), PLUMED's CONTACTMAP ... SUM with a SWITCH and a WEIGHT per
 * contact. With the Q switching function and r0_k the pairs' distances in a native structure,
 * the CV is the fraction of native contacts of Best, Hummer and Eaton.
 *
 * Per-atom coordination numbers (PLUMED's COORDINATIONNUMBER): with a particle function other
 * than PairSum (setParticleFunction()), the force first computes, for each entry i of group A,
 *
 *     c_i = sum over j of s(r_ij)
 *
 * over j in group A, j != i (one-group mode, PLUMED's SPECIES) or over j in group B, j != i
 * (two-group mode, SPECIESA/SPECIESB), and the CV is a function F(c_1, ..., c_N) of them: their
 * sum, mean, a smooth count above or below a threshold, a smooth count between two bounds, a
 * smooth or exact minimum or maximum, or a central moment (ParticleFunction). The forces are
 * -dE/dcv times the sum over i of dF/dc_i dc_i/dx. getCoordinationNumbers() returns the c_i.
 * Pair-list mode has no per-atom numbers.
 *
 * Python example, PLUMED's `COORDINATION GROUPA=a GROUPB=b R_0=0.3 NN=6 MM=12`:
 *
 * \verbatim embed:rst:leading-asterisk
 * .. code-block:: python
 *
 *     force = CoordinationForce(a, b)
 *     force.setR0(0.3)
 *     system.addForce(force)
 *     cv = force.getCollectiveVariableValue(context)
 * \endverbatim
 */
class OPENMM_EXPORT_COORDINATION CoordinationForce : public OpenMM::Force {
public:
    /** Which pairs the force sums over. */
    enum Mode {
        OneGroup = 0,  /**< every unordered pair i < j of group A */
        TwoGroups = 1, /**< every (i in A, j in B), pairs of identical indices skipped */
        PairList = 2   /**< (A[k], B[k]) for each k */
    };
    /** The switching function s(x), x = (r - d0)/r0. */
    enum SwitchingFunction {
        Rational = 0, /**< (1 - x^n)/(1 - x^m) */
        Exp = 1,      /**< exp(-x) */
        Gaussian = 2, /**< exp(-x^2/2) */
        Smap = 3,     /**< (1 + (2^(a/b) - 1) x^a)^(-b/a) */
        Cubic = 4,    /**< (y - 1)^2 (1 + 2y), y = (r - d0)/(dmax - d0) */
        Tanh = 5,     /**< 1 - tanh(x) */
        Cosinus = 6,  /**< (cos(pi x) + 1)/2 for x <= 1, 0 beyond */
        Custom = 7,   /**< any Lepton expression of x */
        Q = 8         /**< 1/(1 + exp(beta (r - lambda r0))): native contacts, r0 the pair's reference distance */
    };
    /**
     * What the CV is made of: the sum over pairs, or a function of the per-atom coordination
     * numbers c_i (i in group A) with PLUMED's definitions (N is the size of group A).
     */
    enum ParticleFunction {
        PairSum = 0,  /**< the sum of s over the force's pairs (PLUMED's COORDINATION); no c_i */
        Sum = 1,      /**< sum_i c_i (COORDINATIONNUMBER ... SUM) */
        Mean = 2,     /**< (1/N) sum_i c_i (MEAN) */
        MoreThan = 3, /**< sum_i (1 - t(c_i)), t the threshold's Rational switching function (MORE_THAN) */
        LessThan = 4, /**< sum_i t(c_i) (LESS_THAN) */
        Between = 5,  /**< sum_i (erf((U - c_i)/(sqrt(2) w)) - erf((L - c_i)/(sqrt(2) w)))/2, w = smear (U - L) (BETWEEN, GAUSSIAN) */
        Min = 6,      /**< beta/log(sum_i exp(beta/c_i)) (MIN={BETA=beta}); 0, its limit, where a c_i is 0; min_i c_i, its limit, where beta/c_i overflows */
        Max = 7,      /**< beta log(sum_i exp(c_i/beta)) (MAX={BETA=beta}); max_i c_i, its limit, where c_i/beta overflows */
        Lowest = 8,   /**< min_i c_i (LOWEST) */
        Highest = 9,  /**< max_i c_i (HIGHEST) */
        Moment = 10   /**< (1/N) sum_i (c_i - mean)^k, the k-th central moment (MOMENTS, moment-k) */
    };
    /**
     * The largest number of bins a pair histogram may have (10^7, 80 MB of counts): larger
     * requests are refused before anything is allocated, on the host or on a GPU.
     */
    static const int MaxHistogramBins = 10000000;
    /**
     * The largest exponent n or m of Rational (1000): near x = 1 each evaluation sums n + m
     * terms, and x^n overflows beyond it anyway.
     */
    static const int MaxExponent = 1000;
    /**
     * Create a force in one-group mode: every unordered pair of the group, each once.
     *
     * @param group   the particle indices
     */
    explicit CoordinationForce(const std::vector<int>& group = std::vector<int>());
    /**
     * Create a force in two-group mode (every i in groupA with every j in groupB) or, if
     * pairList is true, in pair-list mode ((groupA[k], groupB[k]) for each k).
     *
     * @param groupA    the first group of particle indices
     * @param groupB    the second group of particle indices
     * @param pairList  if true, pair the groups element by element
     */
    CoordinationForce(const std::vector<int>& groupA, const std::vector<int>& groupB, bool pairList = false);
    ~CoordinationForce();
    CoordinationForce(const CoordinationForce&) = delete;
    CoordinationForce& operator=(const CoordinationForce&) = delete;
    /** Get which pairs the force sums over. */
    Mode getMode() const;
    /** Get group A (the only group in one-group mode). */
    const std::vector<int>& getGroupA() const;
    /** Get group B (empty in one-group mode). */
    const std::vector<int>& getGroupB() const;
    /** Switch to one-group mode with the given group (does not affect existing Contexts). */
    void setGroup(const std::vector<int>& group);
    /**
     * Switch to two-group or pair-list mode with the given groups (does not affect existing
     * Contexts). Clears the per-pair parameters.
     */
    void setGroups(const std::vector<int>& groupA, const std::vector<int>& groupB, bool pairList = false);
    /**
     * Switch to pair-list mode with a weight and a reference distance per pair (does not affect
     * existing Contexts): cv = sum over k of weights[k] s_k(r_k), where s_k is the force's
     * switching function with r0 = r0s[k]. PLUMED: CONTACTMAP ATOMS1=a0,b0 SWITCH1={.. R_0=r0s[0]}
     * WEIGHT1=weights[0] ... SUM. See setPairParameters() for how d0, dmax and stretch apply.
     *
     * @param particlesA  the first particle of each pair
     * @param particlesB  the second particle of each pair (as many as particlesA)
     * @param weights     the weight of each pair (finite, non-negative), or empty for 1 each
     * @param r0s         the r0 of each pair in nm (finite, positive), or empty for the force's r0
     */
    void setPairs(const std::vector<int>& particlesA, const std::vector<int>& particlesB, const std::vector<double>& weights,
            const std::vector<double>& r0s);
    /**
     * Set the weight and r0 of every pair of a pair list, keeping the pairs. Either vector may
     * be empty: every weight is then 1, or every pair uses the force's r0. The values can be
     * changed in a Context with updateParametersInContext(). Each pair's switching function is
     * the force's with r0 = r0s[k]: d0 stays the force's; the automatic dmax of Rational
     * follows r0s[k] (d0 + r0s[k]*(1e-5)^(1/(n-m)), PLUMED's short syntax for each pair); a dmax
     * set with setDMax() is the same distance for every pair, and stretching makes each pair's
     * s reach 0 there. For Q, r0s[k] is the pair's native distance (PLUMED's REF). Cubic has no
     * r0 (its length is dmax - d0) and takes no per-pair r0s.
     *
     * @param weights  the weight of each pair (finite, non-negative), or empty for 1 each
     * @param r0s      the r0 of each pair in nm (finite, positive), or empty for the force's r0
     */
    void setPairParameters(const std::vector<double>& weights, const std::vector<double>& r0s);
    /** Get the weight of each pair as set with setPairs() or setPairParameters() (empty: 1 each). */
    const std::vector<double>& getPairWeights() const;
    /** Get the r0 of each pair in nm as set with setPairs() or setPairParameters() (empty: the force's r0). */
    const std::vector<double>& getPairR0s() const;
    /** Get whether the pairs carry their own weights or r0s. */
    bool getUsesPairParameters() const;
    /** Get the number of pairs summed over (in two-group mode, pairs of identical indices excluded). */
    long long getNumPairs() const;

    /** Get the switching function type. */
    SwitchingFunction getSwitchingFunction() const;
    /** Set the switching function type. */
    void setSwitchingFunction(SwitchingFunction type);
    /** Get r0, the switching length, in nm. Cubic ignores it and uses dmax - d0. */
    double getR0() const;
    /** Set r0, the switching length, in nm (must be positive). Default 0.3 nm. */
    void setR0(double r0);
    /** Get d0 in nm: s = 1 for r <= d0 (Q: r < d0, evaluated at d0 itself). */
    double getD0() const;
    /** Set d0 in nm (must be non-negative). Default 0. */
    void setD0(double d0);
    /** Get the exponent n of Rational. */
    int getN() const;
    /** Set the exponent n of Rational (positive, at most MaxExponent). Default 6. */
    void setN(int n);
    /** Get the exponent m of Rational as set (0 means 2n). */
    int getM() const;
    /** Set the exponent m of Rational: 0 means 2n (the default); otherwise positive, != n and at most MaxExponent. */
    void setM(int m);
    /** Get the exponent a of Smap. */
    double getA() const;
    /** Set the exponent a of Smap (must be positive). Default 6. */
    void setA(double a);
    /** Get the exponent b of Smap. */
    double getB() const;
    /** Set the exponent b of Smap (must be positive). Default 6. */
    void setB(double b);
    /** Get beta of the Q switching function, in 1/nm. */
    double getBeta() const;
    /** Set beta of the Q switching function, in 1/nm (positive and finite). Default 50/nm, PLUMED's. */
    void setBeta(double beta);
    /** Get lambda of the Q switching function (dimensionless). */
    double getLambda() const;
    /**
     * Set lambda of the Q switching function (positive and finite): a pair counts as a contact
     * up to about lambda times its reference distance. Default 1.8 (all-atom; 1.5 for
     * coarse-grained models).
     */
    void setLambda(double lambda);
    /** Get the expression of x used by the Custom switching function. */
    const std::string& getCustomExpression() const;
    /**
     * Set the expression of x used by the Custom switching function, in Lepton syntax,
     * for example "exp(-x^2)". It may use no variable other than x, and neither it nor its
     * derivative may have a part without variables that is not a number (such as sqrt(-1), or
     * log(-1) in the derivative of (-1)^x): an OpenMMException says which.
     */
    void setCustomExpression(const std::string& expression);

    /**
     * Get dmax in nm: s = 0 for r >= dmax; infinity when there is no cutoff. Unless setDMax()
     * was called, this is the default: for Rational, PLUMED's automatic
     * d0 + r0*(1e-5)^(1/(n-m)); for every other type, no cutoff.
     */
    double getDMax() const;
    /** Set dmax in nm (must exceed d0). Pass infinity for no cutoff. */
    void setDMax(double dmax);
    /** Return to the default dmax (see getDMax()). */
    void setDefaultDMax();
    /** Get whether dmax is the default rather than one set with setDMax(). */
    bool getUsesDefaultDMax() const;
    /** Get whether s is stretched to reach 0 exactly at a finite dmax. */
    bool getStretch() const;
    /**
     * Set whether s is stretched with a finite dmax: s'(r) = (s(r) - s(dmax))/(s(0) - s(dmax)).
     * On by default, as in PLUMED; false is PLUMED's NOSTRETCH.
     */
    void setStretch(bool stretch);
    /** Get the function of the per-atom coordination numbers the CV is (PairSum: none). */
    ParticleFunction getParticleFunction() const;
    /**
     * Set the function of the per-atom coordination numbers c_i the CV is, or PairSum (the
     * default) for the plain sum over pairs. A function other than PairSum needs one-group or
     * two-group mode, which is checked when a Context is created.
     */
    void setParticleFunction(ParticleFunction function);
    /** Get whether the CV is a function of per-atom coordination numbers (not PairSum). */
    bool usesParticleFunction() const;
    /**
     * Set the threshold t of MoreThan and LessThan: PLUMED's RATIONAL switching function of c,
     * t(c) = (1 - y^n)/(1 - y^m), y = (c - d0)/r0, 1 for c <= d0, computed by the same code as
     * s(r). As in PLUMED's MORE_THAN={RATIONAL R_0=.. D_0=.. NN=.. MM=.. D_MAX=..}, it has no cutoff
     * unless dmax is finite, and is then 0 from dmax on and stretched to reach 0 there. Default r0 1,
     * d0 0, n 6, m 0 (= 2n), no cutoff.
     *
     * @param r0    the threshold's r0, in coordination-number units (positive, finite)
     * @param d0    the threshold's d0 (non-negative, finite)
     * @param n     the exponent n (positive, at most MaxExponent)
     * @param m     the exponent m: 0 for 2n, otherwise positive, != n and at most MaxExponent
     * @param dmax  the cutoff (greater than d0), or infinity for none
     */
    void setThreshold(double r0, double d0 = 0.0, int n = 6, int m = 0, double dmax = std::numeric_limits<double>::infinity());
    /** Get the threshold's cutoff (infinity: none). */
    double getThresholdDMax() const;
    /** Get the threshold's r0 (MoreThan, LessThan). */
    double getThresholdR0() const;
    /** Get the threshold's d0 (MoreThan, LessThan). */
    double getThresholdD0() const;
    /** Get the threshold's exponent n (MoreThan, LessThan). */
    int getThresholdN() const;
    /** Get the threshold's exponent m as set (0 means 2n). */
    int getThresholdM() const;
    /**
     * Set the window of Between: PLUMED's BETWEEN={GAUSSIAN LOWER=lower UPPER=upper SMEAR=smear}.
     * Default 0, 1, 0.5.
     *
     * @param lower  the lower bound L (finite)
     * @param upper  the upper bound U (finite, greater than lower)
     * @param smear  the Gaussian's width as a fraction of U - L (positive, finite; the width smear (U - L)
     *               finite and at least the smallest normal double, 2.2e-308)
     */
    void setBetweenBounds(double lower, double upper, double smear = 0.5);
    /** Get the lower bound of Between. */
    double getBetweenLower() const;
    /** Get the upper bound of Between. */
    double getBetweenUpper() const;
    /** Get the smear of Between (the Gaussian's width over U - L). */
    double getBetweenSmear() const;
    /** Get beta of Min and Max (PLUMED's BETA, in coordination-number units). */
    double getFunctionBeta() const;
    /** Set beta of Min and Max (positive, finite). Default 0.1. */
    void setFunctionBeta(double beta);
    /**
     * Set the power k of the distance in each pair's term of a coordination number:
     * c_i = sum over j of s(r_ij) r_ij^k (PLUMED's COORDINATION_MOMENTS R_POWER=k). Default 0, the
     * plain coordination number; anything else needs a particle function (checked when a Context is
     * created).
     *
     * @param k  the power (finite, non-negative)
     */
    void setDistancePower(double k);
    /** Get the power of the distance in each pair's term of a coordination number (0: none). */
    double getDistancePower() const;
    /** Get the power k of Moment. */
    int getMomentPower() const;
    /** Set the power k of Moment (at least 2, as PLUMED requires, and at most MaxExponent). Default 2. */
    void setMomentPower(int k);
    /**
     * Get the per-atom coordination numbers c_i at a Context's positions, one for each entry of
     * group A in its order, as the Context computes them (with the parameters it was created or
     * last updated with). Throws OpenMMException if the force has no particle function there
     * (PairSum), if it is not a force of the Context's System (a CV of a CoordinationBiasForce is
     * not), or if a position is not finite.
     */
    std::vector<double> getCoordinationNumbers(OpenMM::Context& context) const;
    /**
     * Evaluate the particle function F of a vector of coordination numbers, as the kernels do.
     * Throws OpenMMException for PairSum or an empty vector.
     *
     * @param c          the coordination numbers
     * @param[out] dFdc  dF/dc_i for each i
     * @return F(c)
     */
    double evaluateParticleFunction(const std::vector<double>& c, std::vector<double>& dFdc) const;
    /**
     * Evaluate the switching function, as configured with the force's r0 (not weighted), at a
     * distance. Throws OpenMMException if r or the result is not finite.
     *
     * @param r          the distance in nm
     * @param[out] dsdr  the derivative ds/dr in 1/nm
     * @return s(r)
     */
    double evaluateSwitchingFunction(double r, double& dsdr) const;
    /**
     * Evaluate the weighted switching function w_k s_k(r) of one pair of a pair list, with the
     * pair's weight and r0. Throws OpenMMException if r or the result is not finite.
     *
     * @param pair       the index of the pair
     * @param r          the distance in nm
     * @param[out] dsdr  the derivative of w_k s_k in 1/nm
     * @return w_k s_k(r)
     */
    double evaluatePairSwitchingFunction(int pair, double r, double& dsdr) const;

    /**
     * Get the expression of cv that gives the energy in kJ/mol (OpenMM's name, as in CustomCVForce).
     * The default is "cv".
     */
    const std::string& getEnergyFunction() const;
    /**
     * Set the expression of cv that gives the energy in kJ/mol, in Lepton syntax (OpenMM's name, as
     * in CustomCVForce). An expression that does not parse, or that has, or whose derivative by one
     * of its variables has, a part without variables that is not a number (such as 0/0), is refused
     * at once; its variables and tabulated functions are checked against the global parameters and
     * tables when a Context is created.
     */
    void setEnergyFunction(const std::string& energy);
    /** An alias of getEnergyFunction(), this class's earlier name. */
    const std::string& getEnergyExpression() const;
    /** An alias of setEnergyFunction(), this class's earlier name. */
    void setEnergyExpression(const std::string& expression);
    /** Get the number of global parameters the energy expression may use. */
    int getNumGlobalParameters() const;
    /**
     * Add a global parameter the energy expression may use. It becomes a Context parameter.
     *
     * @param name          the parameter's name
     * @param defaultValue  its value in new Contexts (must be finite)
     * @return the index of the parameter
     */
    int addGlobalParameter(const std::string& name, double defaultValue);
    /** Get the name of a global parameter. */
    const std::string& getGlobalParameterName(int index) const;
    /** Set the name of a global parameter. */
    void setGlobalParameterName(int index, const std::string& name);
    /** Get the default value of a global parameter. */
    double getGlobalParameterDefaultValue(int index) const;
    /** Set the default value of a global parameter (must be finite). */
    void setGlobalParameterDefaultValue(int index, double defaultValue);
    /** Get the number of tabulated functions the energy expression may use. */
    int getNumTabulatedFunctions() const;
    /**
     * Add a tabulated function of one variable the energy expression may use, for example
     * a metadynamics bias. It must be a Continuous1DFunction. The force takes ownership. Its
     * range must be finite with min < max and its values finite, which is checked when a
     * Context is created or updated.
     *
     * @param name      the name the expression calls it by
     * @param function  the table
     * @return the index of the function
     */
    int addTabulatedFunction(const std::string& name, OpenMM::TabulatedFunction* function);
    /** Get a tabulated function. Change it, then call updateParametersInContext(). */
    const OpenMM::TabulatedFunction& getTabulatedFunction(int index) const;
    /** Get a tabulated function. Change it, then call updateParametersInContext(). */
    OpenMM::TabulatedFunction& getTabulatedFunction(int index);
    /** Get the name of a tabulated function. */
    const std::string& getTabulatedFunctionName(int index) const;

    /**
     * Set whether distances use the nearest periodic image. Off by default (OpenMM's convention;
     * PLUMED's COORDINATION is periodic unless NOPBC).
     *
     * A force on which this was never called, in a System whose other forces use periodic
     * boundary conditions (PME, say), draws a warning when a Context is created, once per force:
     * its distances ignore the periodic box, so a particle near a face of the box misses its
     * neighbors across it. Call setUsesPeriodicBoundaryConditions(true) for the nearest image, or
     * setUsesPeriodicBoundaryConditions(false) to keep plain distances without the warning (a CV
     * within one molecule that is kept whole, for example). The warning goes to stderr from C++
     * and is a Python warning (openmmcoordination.PeriodicBoundaryWarning) from Python.
     */
    void setUsesPeriodicBoundaryConditions(bool periodic);
    /** Get whether distances use the nearest periodic image. */
    bool usesPeriodicBoundaryConditions() const;
    /**
     * Get whether setUsesPeriodicBoundaryConditions() was called on this force (or on the force
     * it was deserialized or copied from): a force without periodic boundary conditions on which
     * it was not draws a warning in a periodic System (see setUsesPeriodicBoundaryConditions()).
     */
    bool getPeriodicitySet() const;

    /**
     * Copy every parameter that does not change the pairs (switching function, r0, d0, n, m,
     * a, b, beta, lambda, custom expression, dmax, stretch, per-pair weights and r0s, energy
     * expression, tabulated functions) into a
     * Context. Changing the groups or the periodic flag requires reinitializing the Context.
     */
    void updateParametersInContext(OpenMM::Context& context);
    /**
     * Get the value of the collective variable (not the energy) at a Context's positions.
     * Throws OpenMMException if a position or the result is not finite.
     */
    double getCollectiveVariableValue(OpenMM::Context& context) const;
    /**
     * Count the force's pairs by distance at a Context's current positions: counts[k] is the
     * number of pairs with k*dr <= r < (k+1)*dr, dr = maxDistance/numBins.
     *
     * @param context      the Context
     * @param numBins      the number of bins (positive, at most MaxHistogramBins)
     * @param maxDistance  the upper edge of the last bin in nm (positive)
     */
    std::vector<long long> getPairHistogram(OpenMM::Context& context, int numBins, double maxDistance) const;
    /**
     * Add the pair histogram of the Context's current positions to a running histogram kept
     * by the Context's platform (on the GPU for CUDA), without reading it back. Every call
     * until resetPairHistogram() must use the same numBins and maxDistance.
     */
    void accumulatePairHistogram(OpenMM::Context& context, int numBins, double maxDistance) const;
    /** Read back the running histogram (empty if nothing was accumulated). */
    std::vector<long long> getAccumulatedPairHistogram(OpenMM::Context& context) const;
    /** Get the number of frames in the running histogram. */
    int getNumAccumulatedFrames(OpenMM::Context& context) const;
    /** Clear the running histogram. */
    void resetPairHistogram(OpenMM::Context& context) const;
protected:
    OpenMM::ForceImpl* createImpl() const;
private:
    class GlobalParameterInfo;
    class FunctionInfo;
    void checkIndex(int index, int size, const char* what) const;
    CoordinationForceImpl& getImpl(OpenMM::Context& context) const;
    Mode mode;
    std::vector<int> groupA, groupB;
    SwitchingFunction type;
    double r0, d0, a, b, dmax, beta, lambda;
    int n, m;
    ParticleFunction particleFunction;
    double distancePower, thresholdR0, thresholdD0, thresholdDMax, betweenLower, betweenUpper, betweenSmear, functionBeta;
    int thresholdN, thresholdM, momentPower;
    bool defaultDMax, stretch, periodic;
    std::string customExpression, energyExpression;
    std::vector<double> pairWeights, pairR0s;
    std::vector<GlobalParameterInfo> globalParameters;
    std::vector<FunctionInfo> functions;
    bool periodicSet = false;
};

/** @private */
class CoordinationForce::GlobalParameterInfo {
public:
    std::string name;
    double defaultValue;
    GlobalParameterInfo(const std::string& name, double defaultValue) : name(name), defaultValue(defaultValue) {
    }
};

/** @private */
class CoordinationForce::FunctionInfo {
public:
    std::string name;
    OpenMM::TabulatedFunction* function;
    FunctionInfo(const std::string& name, OpenMM::TabulatedFunction* function) : name(name), function(function) {
    }
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_FORCE_H_*/
