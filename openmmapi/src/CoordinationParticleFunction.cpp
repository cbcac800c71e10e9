#include "internal/CoordinationParticleFunction.h"
#include "openmm/OpenMMException.h"
#include <algorithm>
#include <cmath>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

CoordinationParticleFunction::CoordinationParticleFunction(const CoordinationForce& force) : function(force.getParticleFunction()),
        lower(force.getBetweenLower()), upper(force.getBetweenUpper()),
        width(force.getBetweenSmear()*(force.getBetweenUpper()-force.getBetweenLower())), beta(force.getFunctionBeta()),
        power(force.getMomentPower()) {
    if (function == CoordinationForce::PairSum)
        throw OpenMMException("CoordinationForce: the particle function is PairSum: the force has no per-atom coordination numbers");
    if (function == CoordinationForce::MoreThan || function == CoordinationForce::LessThan) {
        CoordinationForce thresholdForce;
        configureThreshold(force, thresholdForce);
        threshold.reset(new CoordinationSwitching(thresholdForce));
    }
}

void CoordinationParticleFunction::configureThreshold(const CoordinationForce& force, CoordinationForce& threshold) {
    threshold.setSwitchingFunction(CoordinationForce::Rational);
    threshold.setR0(force.getThresholdR0());
    threshold.setD0(force.getThresholdD0());
    threshold.setM(0);
    threshold.setN(force.getThresholdN());
    threshold.setM(force.getThresholdM());
    threshold.setDMax(force.getThresholdDMax());
}

double CoordinationParticleFunction::evaluate(const vector<double>& c, vector<double>& dFdc) const {
    int n = c.size();
    if (n == 0)
        throw OpenMMException("CoordinationForce: no coordination numbers to evaluate the particle function of: size 0");
    dFdc.assign(n, 0.0);
    double value = 0.0;
    switch (function) {
        case CoordinationForce::Sum:
        case CoordinationForce::Mean: {
            double scale = (function == CoordinationForce::Mean ? 1.0/n : 1.0);
            for (int i = 0; i < n; i++) {
                value += c[i];
                dFdc[i] = scale;
            }
            return value*scale;
        }
        case CoordinationForce::MoreThan:
        case CoordinationForce::LessThan: {
            double sign = (function == CoordinationForce::MoreThan ? -1.0 : 1.0);
            for (int i = 0; i < n; i++) {
                double dt;
                double t = threshold->evaluate(c[i], dt);
                value += (function == CoordinationForce::MoreThan ? 1.0-t : t);
                dFdc[i] = sign*dt;
            }
            return value;
        }
        case CoordinationForce::Between: {
            double norm = 1.0/(sqrt(2.0)*width), dnorm = 1.0/(sqrt(2.0*M_PI)*width);
            for (int i = 0; i < n; i++) {
                double low = (lower-c[i])*norm, up = (upper-c[i])*norm;
                value += 0.5*(erf(up)-erf(low));
                dFdc[i] = (exp(-low*low)-exp(-up*up))*dnorm;
            }
            return value;
        }
        case CoordinationForce::Min: {
            // beta/log(S), S = sum exp(beta/c_i), factored by the largest exponent top = beta/c_min so that
            // nothing overflows, and dF/dc_i = p_i (F/c_i)^2, p_i = exp(beta/c_i - top)/sum, so that nothing
            // underflows (F^2 and c_i^2 do for c_i below 1e-154: F ~ c_min). A c_i of 0 (an atom with no
            // neighbour) makes S infinite: the limit, 0, with a zero gradient. A c_i so small that beta/c_i
            // overflows: the limit of F as beta/c_min grows, c_min itself, with dF/dc = 1 there.
            int lowest = 0;
            for (int i = 0; i < n; i++) {
                if (c[i] <= 0.0)
                    return 0.0;
                if (c[i] < c[lowest])
                    lowest = i;
            }
            double top = beta/c[lowest];
            if (!isfinite(top)) {
                dFdc[lowest] = 1.0;
                return c[lowest];
            }
            double sum = 0.0;
            for (int i = 0; i < n; i++) {
                dFdc[i] = exp(beta/c[i]-top);
                sum += dFdc[i];
            }
            value = beta/(top+log(sum));
            for (int i = 0; i < n; i++) {
                double ratio = value/c[i];
                dFdc[i] *= ratio*ratio/sum;
            }
            return value;
        }
        case CoordinationForce::Max: {
            // beta log(sum exp(c_i/beta)), factored by the largest exponent; where c_max/beta overflows
            // (a tiny beta), its limit, c_max, with dF/dc = 1 there.
            int highest = 0;
            for (int i = 1; i < n; i++)
                if (c[i] > c[highest])
                    highest = i;
            double top = c[highest]/beta;
            if (!isfinite(top)) {
                dFdc[highest] = 1.0;
                return c[highest];
            }
            double sum = 0.0;
            for (int i = 0; i < n; i++) {
                dFdc[i] = exp(c[i]/beta-top);
                sum += dFdc[i];
            }
            for (int i = 0; i < n; i++)
                dFdc[i] /= sum;
            return beta*(top+log(sum));
        }
        case CoordinationForce::Lowest:
        case CoordinationForce::Highest: {
            int best = 0;
            for (int i = 1; i < n; i++)
                if (function == CoordinationForce::Lowest ? c[i] < c[best] : c[i] > c[best])
                    best = i;
            dFdc[best] = 1.0;
            return c[best];
        }
        case CoordinationForce::Moment: {
            double mean = 0.0;
            for (int i = 0; i < n; i++)
                mean += c[i];
            mean /= n;
            double dev = 0.0;
            for (int i = 0; i < n; i++) {
                value += pow(c[i]-mean, power)/n;
                dev += pow(c[i]-mean, power-1)/n;
            }
            for (int i = 0; i < n; i++)
                dFdc[i] = power*(pow(c[i]-mean, power-1)-dev)/n;
            return value;
        }
        default:
            throw OpenMMException("CoordinationForce: unknown particle function "+to_string((int) function));
    }
}
