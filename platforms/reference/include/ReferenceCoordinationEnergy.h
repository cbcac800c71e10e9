#ifndef REFERENCE_COORDINATION_ENERGY_H_
#define REFERENCE_COORDINATION_ENERGY_H_

#include "openmm/Vec3.h"
#include "openmm/internal/ContextImpl.h"
#include "lepton/ExpressionProgram.h"
#include "lepton/ParsedExpression.h"
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace CoordinationPlugin {

/**
 * An energy expression of CVs on the Reference platform: E, every dE/dcv_k, and the forces
 * -sum_k dE/dcv_k dcv_k/dx. The one chain rule of both Reference kernels.
 */
class ReferenceCoordinationEnergy {
public:
    /**
     * Compile an expression.
     *
     * @param parsed          the parsed expression (its tables bound to Lepton functions)
     * @param cvNames         the names of the CVs, in order
     * @param parameterNames  the global parameters it reads from the Context
     */
    void set(const Lepton::ParsedExpression& parsed, const std::vector<std::string>& cvNames, const std::vector<std::string>& parameterNames);
    /**
     * Evaluate E and add the forces. message(variables, energy, derivatives) builds the
     * OpenMMException's text if E, a dE/dcv_k or a force is not finite.
     */
    double apply(OpenMM::ContextImpl& context, const std::vector<double>& cvs, const std::vector<std::vector<OpenMM::Vec3> >& gradients,
            bool includeForces, const std::function<std::string(const std::map<std::string, double>&, double, const std::vector<double>&)>& message);
private:
    std::vector<std::string> cvNames, parameterNames;
    /** Held by pointer: Lepton's ExpressionProgram::operator= does not free the program it replaces. */
    std::unique_ptr<Lepton::ExpressionProgram> energy;
    std::vector<Lepton::ExpressionProgram> derivatives;
    std::map<std::string, double> variables;
};

} // namespace CoordinationPlugin

#endif /*REFERENCE_COORDINATION_ENERGY_H_*/
