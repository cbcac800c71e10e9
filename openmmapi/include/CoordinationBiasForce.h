#ifndef OPENMM_COORDINATION_BIAS_FORCE_H_
#define OPENMM_COORDINATION_BIAS_FORCE_H_

#include "CoordinationForce.h"
#include "openmm/Context.h"
#include "openmm/Force.h"
#include "openmm/TabulatedFunction.h"
#include "internal/windowsExportCoordination.h"
#include <string>
#include <vector>

namespace CoordinationPlugin {

class CoordinationBiasForceImpl;

/**
 * An energy (kJ/mol) that is a function of several coordination numbers, shaped like OpenMM's
 * CustomCVForce but restricted to CoordinationForce collective variables:
 *
 *     E = f(c1, c2, ...),   forces = -sum over k of dE/dc_k * dc_k/dx,
 *
 * where each c_k is the value of a CoordinationForce added with addCollectiveVariable() (its
 * own groups, mode, switching function, dmax and per-pair parameters), and f is an expression
 * in Lepton syntax of the CV names, of global parameters (which become Context parameters) and
 * of tabulated functions (Continuous1DFunction, Continuous2DFunction, Continuous3DFunction).
 * The CVs may share particles; they must all use periodic boundary conditions or all not, and
 * their own energy expressions must be the default "cv". A CV may also be the distance between
 * two particles, or one component of it (addDistance(); PLUMED's DISTANCE), beside coordination
 * numbers or alone (a bias of distances only: a restraint or a wall on one, PLUMED's nearest image
 * in any box).
 *
 * PLUMED equivalent: several COORDINATION lines and a bias with ARG=c1,c2,... (RESTRAINT,
 * MATHEVAL + BIASVALUE).
 *
 * Platforms: Reference, CPU and CUDA. On CUDA the force is GPU-resident: every CV's sum, E,
 * every dE/dc_k and the forces are computed on the device, with nothing copied to the host
 * during a step.
 *
 * Python example, a harmonic restraint on two coordination numbers:
 *
 * \verbatim embed:rst:leading-asterisk
 * .. code-block:: python
 *
 *     bias = CoordinationBiasForce('0.5*k*(c1-a)^2 + 0.5*k*(c2-b)^2')
 *     bias.addCollectiveVariable('c1', CoordinationForce(na, cl))
 *     bias.addCollectiveVariable('c2', CoordinationForce(na, water))
 *     for name, value in (('k', 100.0), ('a', 1.0), ('b', 5.0)):
 *         bias.addGlobalParameter(name, value)
 *     system.addForce(bias)
 *     c1, c2 = bias.getCollectiveVariableValues(context)
 * \endverbatim
 */
class OPENMM_EXPORT_COORDINATION CoordinationBiasForce : public OpenMM::Force {
public:
    /** The largest number of collective variables a force may have (32). */
    static const int MaxCollectiveVariables = 32;
    /**
     * Create a force.
     *
     * @param energy  the energy in kJ/mol as an expression of the CV names, global parameters
     *                and tabulated functions (Lepton syntax)
     */
    explicit CoordinationBiasForce(const std::string& energy);
    ~CoordinationBiasForce();
    CoordinationBiasForce(const CoordinationBiasForce&) = delete;
    CoordinationBiasForce& operator=(const CoordinationBiasForce&) = delete;
    /** Get the number of collective variables. */
    int getNumCollectiveVariables() const;
    /**
     * Add a collective variable. The force takes ownership of the CoordinationForce and deletes
     * it; a CoordinationForce may belong to one CoordinationBiasForce only, and must not be
     * added to a System as well.
     *
     * @param name      the name the energy expression calls it by (a valid Lepton variable
     *                  name, not already the name of a CV or a global parameter)
     * @param variable  the CoordinationForce whose CV this is; its energy expression must be "cv"
     * @return the index of the collective variable
     */
    int addCollectiveVariable(const std::string& name, CoordinationForce* variable);
    /**
     * Add a distance between two particles as a collective variable, beside the coordination
     * numbers: its length |r2 - r1| (component -1), or one component x, y or z of r2 - r1 (0, 1,
     * 2), in nm, with the nearest periodic image of particle2 where usePeriodic is true (the
     * shortest image, in a triclinic box too, as for the pairs of a CoordinationForce; PLUMED's
     * DISTANCE ATOMS=particle1,particle2, with COMPONENTS for the components and NOPBC for
     * usePeriodic false). It is evaluated in the same bias evaluation as the coordination numbers
     * (on CUDA inside the chain-rule kernel); a force may hold distances alone. It shares the
     * CVs' indices: getCollectiveVariable() throws for it; use isDistance() and
     * getDistanceParameters(). A distance with the nearest image in a System where nothing else
     * is periodic takes it in the System's default box; where that box is still OpenMM's 2 nm
     * cube, creating a Context warns (once per force, as for a CoordinationForce without periodic
     * boundary conditions in a periodic System).
     *
     * @param name         the name the energy expression calls it by (a valid Lepton variable name,
     *                     not already the name of a CV or a global parameter)
     * @param particle1    the index of the first particle (>= 0; checked against the System when a
     *                     Context is created)
     * @param particle2    the index of the second particle (>= 0, not particle1)
     * @param component    -1 for the length, 0, 1 or 2 for the x, y or z component of r2 - r1
     * @param usePeriodic  whether to take the nearest periodic image
     * @return the index of the collective variable
     */
    int addDistance(const std::string& name, int particle1, int particle2, int component = -1, bool usePeriodic = true);
    /** Get whether a collective variable is a distance (addDistance()) rather than a CoordinationForce. */
    bool isDistance(int index) const;
    /**
     * Get the parameters of a distance collective variable (addDistance()); throws
     * OpenMMException if the collective variable is not a distance.
     *
     * @param index        the index of the collective variable
     * @param particle1    the index of the first particle
     * @param particle2    the index of the second particle
     * @param component    -1 for the length, 0, 1 or 2 for the x, y or z component of r2 - r1
     * @param usePeriodic  whether it takes the nearest periodic image
     */
    void getDistanceParameters(int index, int& particle1, int& particle2, int& component, bool& usePeriodic) const;
    /**
     * Set the parameters of a distance collective variable (checked as by addDistance()); a
     * Context takes them at updateParametersInContext().
     *
     * @param index        the index of the collective variable
     * @param particle1    the index of the first particle
     * @param particle2    the index of the second particle
     * @param component    -1 for the length, 0, 1 or 2 for the x, y or z component of r2 - r1
     * @param usePeriodic  whether to take the nearest periodic image
     */
    void setDistanceParameters(int index, int particle1, int particle2, int component, bool usePeriodic);
    /** Get the number of distance collective variables (addDistance()). */
    int getNumDistances() const;
    /** Get the name of a collective variable. */
    const std::string& getCollectiveVariableName(int index) const;
    /** Get the index of the collective variable with a name; throws OpenMMException if there is none. */
    int getCollectiveVariableIndex(const std::string& name) const;
    /**
     * Get a collective variable. Change it, then call updateParametersInContext(). Throws
     * OpenMMException for a distance (isDistance()).
     */
    const CoordinationForce& getCollectiveVariable(int index) const;
    /**
     * Get a collective variable. Change it, then call updateParametersInContext(). Throws
     * OpenMMException for a distance (isDistance()).
     */
    CoordinationForce& getCollectiveVariable(int index);
    /** Get the energy expression (kJ/mol) (OpenMM's name, as in CustomCVForce). */
    const std::string& getEnergyFunction() const;
    /**
     * Set the energy expression (kJ/mol) (OpenMM's name, as in CustomCVForce). An expression that
     * does not parse, or that has, or whose derivative by one of its variables has, a part without
     * variables that is not a number (such as 0/0), is refused at once; its variables and functions
     * are checked against the CVs, global parameters and tables when a Context is created or updated.
     */
    void setEnergyFunction(const std::string& energy);
    /** An alias of getEnergyFunction(), this class's earlier name. */
    const std::string& getEnergyExpression() const;
    /** An alias of setEnergyFunction(), this class's earlier name. */
    void setEnergyExpression(const std::string& energy);
    /** Get the number of global parameters. */
    int getNumGlobalParameters() const;
    /**
     * Add a global parameter the energy expression may use. It becomes a Context parameter.
     *
     * @param name          the parameter's name (not the name of a CV)
     * @param defaultValue  its value in new Contexts (must be finite)
     * @return the index of the parameter
     */
    int addGlobalParameter(const std::string& name, double defaultValue);
    /** Get the name of a global parameter. */
    const std::string& getGlobalParameterName(int index) const;
    /** Set the name of a global parameter (not the name of a CV). */
    void setGlobalParameterName(int index, const std::string& name);
    /** Get the default value of a global parameter. */
    double getGlobalParameterDefaultValue(int index) const;
    /**
     * Set the default value of a global parameter (must be finite). updateParametersInContext()
     * copies a changed default into the Context.
     */
    void setGlobalParameterDefaultValue(int index, double defaultValue);
    /** Get the number of tabulated functions. */
    int getNumTabulatedFunctions() const;
    /**
     * Add a tabulated function the energy expression may use: a Continuous1DFunction,
     * Continuous2DFunction or Continuous3DFunction, with finite values and finite ranges
     * (min < max), checked when a Context is created or updated. The force takes ownership.
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
     * Get the value of every collective variable at a Context's positions, in the order they
     * were added. Throws OpenMMException if a position or a value is not finite.
     */
    std::vector<double> getCollectiveVariableValues(OpenMM::Context& context) const;
    /**
     * Copy everything that does not change the pairs into a Context: every CV's switching
     * parameters and per-pair weights and r0s, the energy expression, changed global parameter
     * defaults, and the tables' values. Changing a CV's groups or periodicity, or adding CVs,
     * requires reinitializing the Context.
     */
    void updateParametersInContext(OpenMM::Context& context);
    /**
     * Copy the values of one tabulated function into a Context, and nothing else: the fast path
     * for a bias that changes every few hundred steps (Metadynamics, OPES). The table must have
     * the type, size, ranges and periodicity it had when the Context was created or last updated
     * by updateParametersInContext(); only its values may have changed (they must be finite).
     * On CUDA a table that is not periodic gets its spline coefficients fitted on the GPU, from
     * the values alone; a periodic one is fitted on the host. Nothing is read back.
     *
     * @param context  the Context
     * @param index    the index of the tabulated function
     */
    void updateTabulatedFunctionInContext(OpenMM::Context& context, int index);
    /**
     * Get whether the force uses periodic boundary conditions: its CoordinationForce CVs (all of
     * them do, or none) or one of its distances (addDistance() with usePeriodic true).
     */
    bool usesPeriodicBoundaryConditions() const;
    /**
     * Keep a running mean and variance of every CV in each Context, updated on the platform (on
     * CUDA, on the device, with nothing copied to the host) once per MD step, for OPES's adaptive
     * kernel width as PLUMED's OPES_METAD keeps it (ADAPTIVE_SIGMA_STRIDE). At the first evaluation
     * of each step after the Context's current one (ContextImpl::getStepCount() differs from the
     * step last counted; further evaluations of the same step, such as a getState() of the energy,
     * do not count), with the CVs c_k of that evaluation:
     *
     *     count += 1,   tau = min(count, stride),   d_k = c_k - mean_k,
     *     mean_k += d_k/tau,   m2_k += d_k*(c_k - mean_k)
     *
     * (Welford's update, with a mean that decays over stride samples once count reaches stride;
     * m2_k/count is the variance). The step at which a Context is created (or setCVStatistics() is
     * called) is not counted, as PLUMED skips the first step. A change takes effect in a Context at
     * updateParametersInContext(); the statistics gathered so far are kept.
     *
     * @param stride  tau's largest value, in steps (PLUMED's ADAPTIVE_SIGMA_STRIDE); 0 (the default) keeps no statistics
     */
    void setCVStatisticsStride(int stride);
    /** Get the stride of the running statistics of the CVs (0: none are kept); see setCVStatisticsStride(). */
    int getCVStatisticsStride() const;
    /**
     * Get the running statistics of the CVs in a Context (setCVStatisticsStride()), through the
     * Context's current step: where that step has not been counted yet, it is counted now, from the
     * CVs at the current positions, and the step's evaluations do not count it again. This waits
     * for the device. Throws OpenMMException if the force keeps no statistics in the Context.
     *
     * @param context  the Context
     * @param mean     the running mean of each CV, in the force's order
     * @param m2       the sum of the squared deviations of each CV (PLUMED's av_M2): its variance is m2/count
     * @param count    the number of steps counted
     */
    void getCVStatistics(OpenMM::Context& context, std::vector<double>& mean, std::vector<double>& m2, long long& count) const;
    /**
     * Replace the running statistics of the CVs in a Context (to continue a run exactly, or to
     * start them again with zeros and count 0): they then hold the Context's current step, which is
     * not counted again. Throws OpenMMException if the force keeps no statistics in the Context, if
     * mean or m2 does not have one value per CV, if a value is not finite, or if m2 or count is negative.
     *
     * @param context  the Context
     * @param mean     the running mean of each CV
     * @param m2       the sum of the squared deviations of each CV
     * @param count    the number of steps counted
     */
    void setCVStatistics(OpenMM::Context& context, const std::vector<double>& mean, const std::vector<double>& m2, long long count);
protected:
    OpenMM::ForceImpl* createImpl() const;
private:
    void checkIndex(int index, int size, const char* what) const;
    void checkName(const std::string& name, const char* what, int parameterIndex) const;
    CoordinationBiasForceImpl& getImpl(OpenMM::Context& context) const;
    std::string energyExpression;
    std::vector<std::string> variableNames;
    /** Each CV's CoordinationForce, NULL for a distance. */
    std::vector<CoordinationForce*> variables;
    /** A distance CV's parameters (addDistance()). */
    struct Distance {
        int particle1, particle2, component;
        bool usePeriodic;
    };
    /** Each CV's distance parameters, used where variables[k] is NULL. */
    std::vector<Distance> distances;
    void checkDistance(const std::string& name, int particle1, int particle2, int component) const;
    std::vector<std::string> parameterNames;
    std::vector<double> parameterDefaults;
    std::vector<std::string> functionNames;
    std::vector<OpenMM::TabulatedFunction*> functions;
    int statisticsStride = 0;
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_BIAS_FORCE_H_*/
