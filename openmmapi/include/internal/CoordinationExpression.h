#ifndef OPENMM_COORDINATION_EXPRESSION_H_
#define OPENMM_COORDINATION_EXPRESSION_H_

#include "CoordinationBiasForce.h"
#include "CoordinationForce.h"
#include "openmm/TabulatedFunction.h"
#include "lepton/CustomFunction.h"
#include "lepton/ParsedExpression.h"
#include <map>
#include <string>
#include "internal/windowsExportCoordination.h"

namespace CoordinationPlugin {

/**
 * The energy expressions of CoordinationForce and CoordinationBiasForce: parsing them with Lepton,
 * checking their variables and their tabulated functions. The forces, their Impls and every
 * platform parse an expression here, so that all of them accept the same expressions and refuse
 * the others with the same message ("<class name>: ...", thrown as OpenMMException).
 */
class OPENMM_EXPORT_COORDINATION CoordinationExpression {
public:
    /**
     * Parse the energy expression of a CoordinationForce, checking that it uses no variable
     * other than cv and the force's global parameters.
     *
     * @param force      the force
     * @param functions  Lepton functions for the force's tabulated functions, by name
     */
    static Lepton::ParsedExpression parseEnergyExpression(const CoordinationForce& force,
            const std::map<std::string, Lepton::CustomFunction*>& functions);
    /**
     * Parse the energy expression of a CoordinationForce as parseEnergyExpression(force, functions)
     * does, with a placeholder of one argument for each of its tabulated functions.
     */
    static Lepton::ParsedExpression parseEnergyExpression(const CoordinationForce& force);
    /**
     * Parse the energy expression of a CoordinationBiasForce, checking that it uses no variable
     * other than the names of the CVs and the force's global parameters.
     *
     * @param force      the force
     * @param functions  Lepton functions for the force's tabulated functions, by name
     */
    static Lepton::ParsedExpression parseEnergyExpression(const CoordinationBiasForce& force,
            const std::map<std::string, Lepton::CustomFunction*>& functions);
    /**
     * Parse the energy expression of a CoordinationBiasForce as parseEnergyExpression(force,
     * functions) does, with a placeholder for each of its tabulated functions, of as many
     * arguments as the table has dimensions. The tables must have passed checkTable().
     */
    static Lepton::ParsedExpression parseEnergyExpression(const CoordinationBiasForce& force);
    /**
     * Parse an energy expression on its own, before the force's tables are known: every call
     * of a function Lepton does not define stands for a table of one argument (of as many
     * arguments as the call has, if tablesOfSeveralArguments). Throws OpenMMException, naming
     * className, if the expression does not parse.
     */
    static Lepton::ParsedExpression parseEnergyExpressionSyntax(const std::string& expression,
            const std::string& className = "CoordinationForce", bool tablesOfSeveralArguments = false);
    /**
     * Optimize an expression with Lepton, first refusing one that has a part without variables
     * whose value is not a number (sqrt(-1), 0/0, log(-1), ...): Lepton's optimize() never ends on
     * such a constant. Every expression a user wrote, and every derivative of one, is optimized here.
     *
     * @param parsed       the expression
     * @param description  what it is, for the message: "<class name>: ... \"<expression>\""
     * @throws OpenMMException  naming the description and the part
     */
    static Lepton::ParsedExpression optimize(const Lepton::ParsedExpression& parsed, const std::string& description);
    /**
     * Refuse, as optimize() does, an expression or a derivative of it by one of its variables that
     * has a constant part that is not a number: what the forces' setters call, so that the error
     * comes when the expression is set rather than when a Context is made.
     *
     * @param parsed       the expression
     * @param description  what it is, for the message: "<class name>: ... \"<expression>\""
     * @throws OpenMMException  naming the description, the derivative and the part
     */
    static void checkConstants(const Lepton::ParsedExpression& parsed, const std::string& description);
    /** Whether the energy expression of a force is just the CV (the default), so that no chain rule is needed. */
    static bool isEnergyTheCV(const CoordinationForce& force);
    /**
     * Check a tabulated function: a Continuous1DFunction (or, with maxDimensions 2 or 3, a
     * Continuous2DFunction or Continuous3DFunction) with finite values, at least 2 points and
     * a finite range min < max along each axis. Throws OpenMMException naming className.
     */
    static void checkTable(const std::string& className, const std::string& name, const OpenMM::TabulatedFunction& function,
            int maxDimensions);
    /**
     * The shape of a table in words, for comparing a table with the one a Context holds and for
     * messages: "121 x 121 points over [0, 1] x [0, 1], not periodic".
     */
    static std::string describeTableShape(const OpenMM::TabulatedFunction& function);
    /**
     * A copy of a Continuous1DFunction, Continuous2DFunction or Continuous3DFunction that keeps
     * whether it is periodic (OpenMM's TabulatedFunction::Copy() drops that: a periodic table
     * copied with it is evaluated as a natural spline). Throws OpenMMException for another type.
     */
    static OpenMM::TabulatedFunction* copyTable(const OpenMM::TabulatedFunction& function);
};

} // namespace CoordinationPlugin

#endif /*OPENMM_COORDINATION_EXPRESSION_H_*/
