#include "internal/CoordinationErrorMessages.h"
#include <sstream>

using namespace CoordinationPlugin;
using namespace std;

string CoordinationErrorMessages::nonFiniteEnergy(const string& expression, const map<string, double>& variables,
        double energy, double dEdcv) {
    stringstream msg;
    msg << "CoordinationForce: the energy expression \"" << expression << "\" gives a non-finite energy or force (energy "
        << energy << ", dE/dcv " << dEdcv << ") at cv = ";
    auto cv = variables.find("cv");
    if (cv != variables.end())
        msg << cv->second;
    else
        msg << "?";
    for (auto& variable : variables)
        if (variable.first != "cv")
            msg << ", " << variable.first << " = " << variable.second;
    return msg.str();
}

string CoordinationErrorMessages::nonFiniteBiasEnergy(const string& expression, const map<string, double>& variables,
        double energy, const vector<double>& derivatives) {
    stringstream msg;
    msg << "CoordinationBiasForce: the energy expression \"" << expression << "\" gives a non-finite energy or force (energy "
        << energy << ", dE/dcv";
    for (double d : derivatives)
        msg << " " << d;
    msg << ") at";
    const char* separator = " ";
    for (auto& variable : variables) {
        msg << separator << variable.first << " = " << variable.second;
        separator = ", ";
    }
    return msg.str();
}

string CoordinationErrorMessages::nonFiniteCollectiveVariable(double cv, int particle) {
    stringstream msg;
    if (particle < 0)
        msg << "CoordinationForce: the collective variable is not finite: " << cv;
    else
        msg << "CoordinationForce: the derivative of the collective variable (" << cv
            << ") with respect to the position of particle " << particle << " is not finite";
    msg << " (the switching function or the periodic box gives values that are not finite)";
    return msg.str();
}

string CoordinationErrorMessages::globalParameterNotInContext(const string& owner, const map<string, double>& parameters,
        const map<string, double>& contextParameters) {
    for (auto& parameter : parameters)
        if (contextParameters.find(parameter.first) == contextParameters.end())
            return owner+": updateParametersInContext: the global parameter \""+parameter.first+"\" is not in the Context "
                    "(it was added after the Context was created); call context.reinitialize(preserveState=True) to add it";
    return "";
}
