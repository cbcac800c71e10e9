#include "ReferenceCoordinationEnergy.h"
#include "internal/CoordinationExpression.h"
#include "internal/CoordinationErrorMessages.h"
#include "openmm/OpenMMException.h"
#include "openmm/reference/ReferencePlatform.h"
#include <cmath>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

static ReferencePlatform::PlatformData& getData(ContextImpl& context) {
    return *reinterpret_cast<ReferencePlatform::PlatformData*>(context.getPlatformData());
}

void ReferenceCoordinationEnergy::set(const Lepton::ParsedExpression& parsed, const vector<string>& cvNames,
        const vector<string>& parameterNames) {
    this->cvNames = cvNames;
    this->parameterNames = parameterNames;
    energy.reset(new Lepton::ExpressionProgram(parsed.createProgram()));
    derivatives.clear();
    for (const string& name : cvNames)
        derivatives.push_back(CoordinationExpression::optimize(parsed.differentiate(name), "energy expression: its derivative by "+name).createProgram());
}

double ReferenceCoordinationEnergy::apply(ContextImpl& context, const vector<double>& cvs, const vector<vector<Vec3> >& gradients,
        bool includeForces, const function<string(const map<string, double>&, double, const vector<double>&)>& message) {
    for (int k = 0; k < cvs.size(); k++) {
        if (!isfinite(cvs[k]))
            throw OpenMMException(CoordinationErrorMessages::nonFiniteCollectiveVariable(cvs[k]));
        for (int i = 0; i < gradients[k].size(); i++)
            if (!(isfinite(gradients[k][i][0]) && isfinite(gradients[k][i][1]) && isfinite(gradients[k][i][2])))
                throw OpenMMException(CoordinationErrorMessages::nonFiniteCollectiveVariable(cvs[k], i));
    }
    for (const string& name : parameterNames)
        variables[name] = context.getParameter(name);
    for (int k = 0; k < cvs.size(); k++)
        variables[cvNames[k]] = cvs[k];
    double energyValue = energy->evaluate(variables);
    vector<double> dEdcv(cvs.size());
    bool finite = isfinite(energyValue);
    for (int k = 0; k < cvs.size(); k++) {
        dEdcv[k] = derivatives[k].evaluate(variables);
        finite = finite && isfinite(dEdcv[k]);
    }
    vector<Vec3> forces;
    if (includeForces && finite) {
        forces.resize(gradients[0].size());
        for (int k = 0; k < cvs.size(); k++)
            if (dEdcv[k] != 0.0)
                for (int i = 0; i < forces.size(); i++)
                    forces[i] -= gradients[k][i]*dEdcv[k];
        for (int i = 0; finite && i < forces.size(); i++)
            finite = (isfinite(forces[i][0]) && isfinite(forces[i][1]) && isfinite(forces[i][2]));
    }
    if (!finite)
        throw OpenMMException(message(variables, energyValue, dEdcv));
    if (includeForces) {
        vector<Vec3>& contextForces = *getData(context).forces;
        for (int i = 0; i < contextForces.size(); i++)
            contextForces[i] += forces[i];
    }
    return energyValue;
}
