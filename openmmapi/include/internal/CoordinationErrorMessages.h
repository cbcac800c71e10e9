#ifndef OPENMM_COORDINATION_ERROR_MESSAGES_H_
#define OPENMM_COORDINATION_ERROR_MESSAGES_H_

#include <map>
#include <string>
#include <vector>
#include "internal/windowsExportCoordination.h"

namespace CoordinationPlugin {

/**
 * The messages of the OpenMMExceptions thrown when a collective variable, an energy or a force
 * is not finite. The Impls and every platform build their messages here, so that all of them
 * report the same problem in the same words.
 */
class OPENMM_EXPORT_COORDINATION CoordinationErrorMessages {
public:
    /**
     * The message when the energy expression of a CoordinationForce gives a non-finite energy or
     * dE/dcv (or forces that overflow): it names the expression and the values of its variables.
     *
     * @param expression  the energy expression
     * @param variables   the values of cv and of the global parameters, by name
     * @param energy      the energy the expression gave
     * @param dEdcv       the derivative the expression gave
     */
    static std::string nonFiniteEnergy(const std::string& expression, const std::map<std::string, double>& variables,
            double energy, double dEdcv);
    /**
     * The message when the energy expression of a CoordinationBiasForce gives a non-finite energy
     * or derivative dE/dc_k (or forces that overflow): it names the expression and the values of
     * its variables.
     *
     * @param expression   the energy expression
     * @param variables    the values of the CVs and of the global parameters, by name
     * @param energy       the energy the expression gave
     * @param derivatives  the derivative with respect to each CV
     */
    static std::string nonFiniteBiasEnergy(const std::string& expression, const std::map<std::string, double>& variables,
            double energy, const std::vector<double>& derivatives);
    /**
     * The message when a collective variable is not finite or, if particle is not -1, when its
     * derivative with respect to that particle's position is not.
     */
    static std::string nonFiniteCollectiveVariable(double cv, int particle = -1);
    /**
     * The message when updateParametersInContext() meets a global parameter of the force that the
     * Context does not have (one added after the Context was created), or "" where the Context has
     * all of them.
     *
     * @param owner              the class, "CoordinationForce" or "CoordinationBiasForce"
     * @param parameters         the force's global parameters, by name
     * @param contextParameters  the Context's parameters, by name
     */
    static std::string globalParameterNotInContext(const std::string& owner, const std::map<std::string, double>& parameters,
            const std::map<std::string, double>& contextParameters);
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_ERROR_MESSAGES_H_*/
