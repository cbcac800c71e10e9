#include "CoordinationForce.h"
#include "internal/CoordinationExpression.h"
#include "internal/CoordinationForceImpl.h"
#include "internal/CoordinationParticleFunction.h"
#include "internal/CoordinationSwitching.h"
#include "internal/CoordinationWarnings.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/AssertionUtilities.h"
#include "openmm/internal/ContextImpl.h"
#include "lepton/ParsedExpression.h"
#include "lepton/Parser.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

template <class T>
static void require(bool condition, const string& what, T value) {
    if (!condition) {
        stringstream msg;
        msg << "CoordinationForce: " << what << " " << value;
        throw OpenMMException(msg.str());
    }
}

/**
 * Check a group: not empty, no negative index, and (unique) no index twice, naming the first
 * position that repeats one. A million particles take a sort, not a message built per index.
 */
static void checkGroup(const vector<int>& group, const string& name, bool unique) {
    require(!group.empty(), name+" is empty: size", 0);
    for (int i = 0; i < group.size(); i++)
        if (group[i] < 0)
            require(false, name+" has an invalid particle index at position "+to_string(i)+":", group[i]);
    if (!unique)
        return;
    // (index, position) in order: each index's later positions repeat it; the first of them is the one to name.
    vector<pair<int, int> > sorted(group.size());
    for (int i = 0; i < group.size(); i++)
        sorted[i] = make_pair(group[i], i);
    sort(sorted.begin(), sorted.end());
    int repeat = -1;
    for (size_t k = 1; k < sorted.size(); k++)
        if (sorted[k].first == sorted[k-1].first && (repeat < 0 || sorted[k].second < repeat))
            repeat = sorted[k].second;
    if (repeat >= 0)
        require(false, name+" repeats a particle index at position "+to_string(repeat)+":", group[repeat]);
}

CoordinationForce::CoordinationForce(const vector<int>& group) : mode(OneGroup), type(Rational), r0(0.3), d0(0.0),
        a(6.0), b(6.0), dmax(numeric_limits<double>::infinity()), beta(50.0), lambda(1.8), n(6), m(0), particleFunction(PairSum),
        distancePower(0.0), thresholdR0(1.0), thresholdD0(0.0), thresholdDMax(numeric_limits<double>::infinity()), betweenLower(0.0), betweenUpper(1.0), betweenSmear(0.5), functionBeta(0.1),
        thresholdN(6), thresholdM(0), momentPower(2), defaultDMax(true), stretch(true), periodic(false), customExpression("1/(1+x^6)"), energyExpression("cv") {
    if (!group.empty())
        setGroup(group);
}

CoordinationForce::CoordinationForce(const vector<int>& groupA, const vector<int>& groupB, bool pairList) : CoordinationForce() {
    setGroups(groupA, groupB, pairList);
}

CoordinationForce::~CoordinationForce() {
    CoordinationWarnings::forget(this);
    for (FunctionInfo& function : functions)
        delete function.function;
}

CoordinationForce::Mode CoordinationForce::getMode() const {
    return mode;
}

const vector<int>& CoordinationForce::getGroupA() const {
    return groupA;
}

const vector<int>& CoordinationForce::getGroupB() const {
    return groupB;
}

void CoordinationForce::setGroup(const vector<int>& group) {
    checkGroup(group, "group", true);
    mode = OneGroup;
    groupA = group;
    groupB.clear();
    pairWeights.clear();
    pairR0s.clear();
}

void CoordinationForce::setGroups(const vector<int>& groupA, const vector<int>& groupB, bool pairList) {
    checkGroup(groupA, "groupA", !pairList);
    checkGroup(groupB, "groupB", !pairList);
    if (pairList) {
        require(groupA.size() == groupB.size(), "pair list needs groups of equal size: groupA has "+to_string(groupA.size())+", groupB has", groupB.size());
        for (int k = 0; k < groupA.size(); k++)
            require(groupA[k] != groupB[k], "pair list pairs a particle with itself at position "+to_string(k)+": particle", groupA[k]);
    }
    mode = (pairList ? PairList : TwoGroups);
    this->groupA = groupA;
    this->groupB = groupB;
    pairWeights.clear();
    pairR0s.clear();
}

/** Check per-pair values: as many as the pairs (or none), each finite and positive (or non-negative). */
static void checkPairValues(const vector<double>& values, size_t numPairs, const string& name, bool zeroAllowed) {
    if (values.empty())
        return;
    require(values.size() == numPairs, name+" must have one value per pair ("+to_string(numPairs)+" pairs), got", values.size());
    for (int k = 0; k < values.size(); k++) {
        string what = name+" must be "+(zeroAllowed ? "non-negative" : "positive")+" and finite: pair "+to_string(k)+" has";
        require(isfinite(values[k]) && (zeroAllowed ? values[k] >= 0 : values[k] > 0), what, values[k]);
    }
}

/** Check the per-pair weights (non-negative) and r0s (positive) of a pair list of numPairs pairs. */
static void checkPairParameters(const vector<double>& weights, const vector<double>& r0s, size_t numPairs) {
    checkPairValues(weights, numPairs, "weights", true);
    checkPairValues(r0s, numPairs, "r0s", false);
}

void CoordinationForce::setPairs(const vector<int>& particlesA, const vector<int>& particlesB, const vector<double>& weights,
        const vector<double>& r0s) {
    checkPairParameters(weights, r0s, particlesA.size());
    setGroups(particlesA, particlesB, true);
    pairWeights = weights;
    pairR0s = r0s;
}

void CoordinationForce::setPairParameters(const vector<double>& weights, const vector<double>& r0s) {
    require(mode == PairList || (weights.empty() && r0s.empty()), "per-pair weights and r0s need pair-list mode; the mode is", mode);
    checkPairParameters(weights, r0s, groupA.size());
    pairWeights = weights;
    pairR0s = r0s;
}

const vector<double>& CoordinationForce::getPairWeights() const {
    return pairWeights;
}

const vector<double>& CoordinationForce::getPairR0s() const {
    return pairR0s;
}

bool CoordinationForce::getUsesPairParameters() const {
    return !pairWeights.empty() || !pairR0s.empty();
}

long long CoordinationForce::getNumPairs() const {
    long long na = groupA.size(), nb = groupB.size();
    if (mode == OneGroup)
        return na*(na-1)/2;
    if (mode == PairList)
        return na;
    set<int> inA(groupA.begin(), groupA.end());
    long long common = 0;
    for (int i : groupB)
        common += inA.count(i);
    return na*nb-common;
}

CoordinationForce::SwitchingFunction CoordinationForce::getSwitchingFunction() const {
    return type;
}

void CoordinationForce::setSwitchingFunction(SwitchingFunction type) {
    require(type >= Rational && type <= Q, "switching function is not a known type:", (int) type);
    this->type = type;
}

double CoordinationForce::getR0() const {
    return r0;
}

void CoordinationForce::setR0(double r0) {
    require(r0 > 0 && isfinite(r0), "r0 must be positive and finite, got", r0);
    this->r0 = r0;
}

double CoordinationForce::getD0() const {
    return d0;
}

void CoordinationForce::setD0(double d0) {
    require(d0 >= 0 && isfinite(d0), "d0 must be non-negative and finite, got", d0);
    this->d0 = d0;
}

int CoordinationForce::getN() const {
    return n;
}

void CoordinationForce::setN(int n) {
    require(n > 0, "n must be positive, got", n);
    require(n <= MaxExponent, "n must be at most MaxExponent = "+to_string(MaxExponent)+", got", n);
    require(n != m, "n must differ from m, got n = m =", n);
    this->n = n;
}

int CoordinationForce::getM() const {
    return m;
}

void CoordinationForce::setM(int m) {
    require(m >= 0, "m must be non-negative (0 means 2n), got", m);
    require(m <= MaxExponent, "m must be at most MaxExponent = "+to_string(MaxExponent)+", got", m);
    require(m != n, "m must differ from n, got m = n =", m);
    this->m = m;
}

double CoordinationForce::getA() const {
    return a;
}

void CoordinationForce::setA(double a) {
    require(a > 0 && isfinite(a), "a (Smap) must be positive, got", a);
    this->a = a;
}

double CoordinationForce::getB() const {
    return b;
}

void CoordinationForce::setB(double b) {
    require(b > 0 && isfinite(b), "b (Smap) must be positive, got", b);
    this->b = b;
}

double CoordinationForce::getBeta() const {
    return beta;
}

void CoordinationForce::setBeta(double beta) {
    require(beta > 0 && isfinite(beta), "beta (Q) must be positive and finite, got", beta);
    this->beta = beta;
}

double CoordinationForce::getLambda() const {
    return lambda;
}

void CoordinationForce::setLambda(double lambda) {
    require(lambda > 0 && isfinite(lambda), "lambda (Q) must be positive and finite, got", lambda);
    this->lambda = lambda;
}

const string& CoordinationForce::getCustomExpression() const {
    return customExpression;
}

void CoordinationForce::setCustomExpression(const string& expression) {
    Lepton::ParsedExpression parsed;
    try {
        parsed = Lepton::Parser::parse(expression);
    }
    catch (const exception& e) {
        throw OpenMMException("CoordinationForce: custom expression does not parse: \""+expression+"\": "+e.what());
    }
    for (const string& variable : CoordinationSwitching::getVariables(parsed))
        require(variable == "x", "custom expression \""+expression+"\" may use only the variable x, not", variable);
    CoordinationExpression::checkConstants(parsed, "CoordinationForce: custom expression \""+expression+"\"");
    customExpression = expression;
}

double CoordinationForce::getDMax() const {
    if (!defaultDMax)
        return dmax;
    return CoordinationSwitching::defaultDMax(*this, r0);
}

void CoordinationForce::setDMax(double dmax) {
    require(dmax > d0, "dmax must be greater than d0 "+to_string(d0)+", got", dmax);
    this->dmax = dmax;
    defaultDMax = false;
}

void CoordinationForce::setDefaultDMax() {
    defaultDMax = true;
    dmax = numeric_limits<double>::infinity();
}

bool CoordinationForce::getUsesDefaultDMax() const {
    return defaultDMax;
}

bool CoordinationForce::getStretch() const {
    return stretch;
}

void CoordinationForce::setStretch(bool stretch) {
    this->stretch = stretch;
}

double CoordinationForce::evaluateSwitchingFunction(double r, double& dsdr) const {
    require(isfinite(r), "evaluateSwitchingFunction needs a finite distance r, got", r);
    double s = CoordinationSwitching(*this).evaluate(r, dsdr);
    if (!isfinite(s) || !isfinite(dsdr)) {
        stringstream msg;
        msg << "CoordinationForce: the switching function is not finite at r = " << r << ": s = " << s << ", ds/dr = " << dsdr;
        throw OpenMMException(msg.str());
    }
    return s;
}

double CoordinationForce::evaluatePairSwitchingFunction(int pair, double r, double& dsdr) const {
    require(mode == PairList, "evaluatePairSwitchingFunction needs pair-list mode; the mode is", mode);
    checkIndex(pair, groupA.size(), "pair");
    require(isfinite(r), "evaluatePairSwitchingFunction needs a finite distance r, got", r);
    CoordinationSwitching switching(*this);
    double s = switching.evaluate(r, switching.forPair(pair), dsdr);
    if (!isfinite(s) || !isfinite(dsdr)) {
        stringstream msg;
        msg << "CoordinationForce: the switching function of pair " << pair << " is not finite at r = " << r << ": s = " << s << ", ds/dr = " << dsdr;
        throw OpenMMException(msg.str());
    }
    return s;
}

const string& CoordinationForce::getEnergyFunction() const {
    return energyExpression;
}

void CoordinationForce::setEnergyFunction(const string& energy) {
    CoordinationExpression::parseEnergyExpressionSyntax(energy);
    energyExpression = energy;
}

const string& CoordinationForce::getEnergyExpression() const {
    return getEnergyFunction();
}

void CoordinationForce::setEnergyExpression(const string& expression) {
    setEnergyFunction(expression);
}

int CoordinationForce::getNumGlobalParameters() const {
    return globalParameters.size();
}

int CoordinationForce::addGlobalParameter(const string& name, double defaultValue) {
    require(isfinite(defaultValue), "global parameter \""+name+"\" needs a finite default value, got", defaultValue);
    globalParameters.push_back(GlobalParameterInfo(name, defaultValue));
    return globalParameters.size()-1;
}

void CoordinationForce::checkIndex(int index, int size, const char* what) const {
    require(index >= 0 && index < size, string(what)+" index out of range:", index);
}

const string& CoordinationForce::getGlobalParameterName(int index) const {
    checkIndex(index, globalParameters.size(), "global parameter");
    return globalParameters[index].name;
}

void CoordinationForce::setGlobalParameterName(int index, const string& name) {
    checkIndex(index, globalParameters.size(), "global parameter");
    globalParameters[index].name = name;
}

double CoordinationForce::getGlobalParameterDefaultValue(int index) const {
    checkIndex(index, globalParameters.size(), "global parameter");
    return globalParameters[index].defaultValue;
}

void CoordinationForce::setGlobalParameterDefaultValue(int index, double defaultValue) {
    checkIndex(index, globalParameters.size(), "global parameter");
    require(isfinite(defaultValue), "global parameter \""+globalParameters[index].name+"\" needs a finite default value, got", defaultValue);
    globalParameters[index].defaultValue = defaultValue;
}

int CoordinationForce::getNumTabulatedFunctions() const {
    return functions.size();
}

int CoordinationForce::addTabulatedFunction(const string& name, TabulatedFunction* function) {
    require(dynamic_cast<Continuous1DFunction*>(function) != NULL, "tabulated function must be a Continuous1DFunction:", name);
    functions.push_back(FunctionInfo(name, function));
    return functions.size()-1;
}

const TabulatedFunction& CoordinationForce::getTabulatedFunction(int index) const {
    checkIndex(index, functions.size(), "tabulated function");
    return *functions[index].function;
}

TabulatedFunction& CoordinationForce::getTabulatedFunction(int index) {
    checkIndex(index, functions.size(), "tabulated function");
    return *functions[index].function;
}

const string& CoordinationForce::getTabulatedFunctionName(int index) const {
    checkIndex(index, functions.size(), "tabulated function");
    return functions[index].name;
}

void CoordinationForce::setUsesPeriodicBoundaryConditions(bool periodic) {
    this->periodic = periodic;
    periodicSet = true;
}

bool CoordinationForce::getPeriodicitySet() const {
    return periodicSet;
}

bool CoordinationForce::usesPeriodicBoundaryConditions() const {
    return periodic;
}

ForceImpl* CoordinationForce::createImpl() const {
    return new CoordinationForceImpl(*this);
}

CoordinationForceImpl& CoordinationForce::getImpl(Context& context) const {
    // OpenMM's message ("getImplInContext: This Force is not present in the Context") names neither the
    // force nor the usual cause: a CV of a CoordinationBiasForce is no force of the System.
    ForceImpl* impl;
    try {
        impl = &getImplInContext(context);
    }
    catch (OpenMMException&) {
        throw OpenMMException("CoordinationForce \""+getName()+"\": this force is not in the Context's System (a "
                "CoordinationForce added to a CoordinationBiasForce belongs to that force: read its value with the bias force's "
                "getCollectiveVariableValues())");
    }
    return dynamic_cast<CoordinationForceImpl&>(*impl);
}

void CoordinationForce::updateParametersInContext(Context& context) {
    getImpl(context).updateParametersInContext(getContextImpl(context));
}

double CoordinationForce::getCollectiveVariableValue(Context& context) const {
    return getImpl(context).computeCollectiveVariable(getContextImpl(context));
}

vector<long long> CoordinationForce::getPairHistogram(Context& context, int numBins, double maxDistance) const {
    return getImpl(context).computePairHistogram(getContextImpl(context), numBins, maxDistance);
}

void CoordinationForce::accumulatePairHistogram(Context& context, int numBins, double maxDistance) const {
    getImpl(context).accumulatePairHistogram(getContextImpl(context), numBins, maxDistance);
}

vector<long long> CoordinationForce::getAccumulatedPairHistogram(Context& context) const {
    return getImpl(context).getAccumulatedPairHistogram(getContextImpl(context));
}

int CoordinationForce::getNumAccumulatedFrames(Context& context) const {
    return getImpl(context).getNumAccumulatedFrames();
}

void CoordinationForce::resetPairHistogram(Context& context) const {
    getImpl(context).resetPairHistogram(getContextImpl(context));
}

CoordinationForce::ParticleFunction CoordinationForce::getParticleFunction() const {
    return particleFunction;
}

void CoordinationForce::setParticleFunction(ParticleFunction function) {
    require(function >= PairSum && function <= Moment, "particleFunction is not a known ParticleFunction:", (int) function);
    particleFunction = function;
}

bool CoordinationForce::usesParticleFunction() const {
    return particleFunction != PairSum;
}

void CoordinationForce::setThreshold(double r0, double d0, int n, int m, double dmax) {
    require(r0 > 0 && isfinite(r0), "threshold r0 must be positive and finite, got", r0);
    require(d0 >= 0 && isfinite(d0), "threshold d0 must be non-negative and finite, got", d0);
    require(n > 0 && n <= MaxExponent, "threshold n must be positive and at most MaxExponent = "+to_string(MaxExponent)+", got", n);
    require(m >= 0 && m <= MaxExponent, "threshold m must be non-negative (0 means 2n) and at most MaxExponent = "+to_string(MaxExponent)+", got", m);
    require(m != n, "threshold m must differ from n, got m = n =", m);
    if (!(dmax > d0)) {
        stringstream msg;
        msg << "threshold dmax must be greater than d0 " << d0 << ", got";
        require(false, msg.str(), dmax);
    }
    thresholdR0 = r0;
    thresholdDMax = dmax;
    thresholdD0 = d0;
    thresholdN = n;
    thresholdM = m;
}

double CoordinationForce::getThresholdR0() const {
    return thresholdR0;
}

double CoordinationForce::getThresholdDMax() const {
    return thresholdDMax;
}

double CoordinationForce::getThresholdD0() const {
    return thresholdD0;
}

int CoordinationForce::getThresholdN() const {
    return thresholdN;
}

int CoordinationForce::getThresholdM() const {
    return thresholdM;
}

void CoordinationForce::setBetweenBounds(double lower, double upper, double smear) {
    require(isfinite(lower), "Between lower must be finite, got", lower);
    require(isfinite(upper), "Between upper must be finite, got", upper);
    if (!(upper > lower)) {
        stringstream msg;
        msg << "Between upper must be greater than lower " << lower << ", got";
        require(false, msg.str(), upper);
    }
    require(smear > 0 && isfinite(smear), "Between smear must be positive and finite, got", smear);
    // The Gaussian's width, smear (U - L): one that overflows or is subnormal gives NaN (0 times infinity)
    // where a c_i equals a bound.
    double width = smear*(upper-lower);
    if (!(isfinite(width) && width >= numeric_limits<double>::min())) {
        stringstream msg;
        msg << "Between width smear*(upper - lower) = " << smear << "*(" << upper << " - " << lower
            << ") must be finite and at least " << numeric_limits<double>::min() << ", got";
        require(false, msg.str(), width);
    }
    betweenLower = lower;
    betweenUpper = upper;
    betweenSmear = smear;
}

double CoordinationForce::getBetweenLower() const {
    return betweenLower;
}

double CoordinationForce::getBetweenUpper() const {
    return betweenUpper;
}

double CoordinationForce::getBetweenSmear() const {
    return betweenSmear;
}

double CoordinationForce::getFunctionBeta() const {
    return functionBeta;
}

void CoordinationForce::setFunctionBeta(double beta) {
    require(beta > 0 && isfinite(beta), "functionBeta must be positive and finite, got", beta);
    functionBeta = beta;
}

void CoordinationForce::setDistancePower(double k) {
    require(k >= 0 && isfinite(k), "distancePower must be non-negative and finite, got", k);
    distancePower = k;
}

double CoordinationForce::getDistancePower() const {
    return distancePower;
}

int CoordinationForce::getMomentPower() const {
    return momentPower;
}

void CoordinationForce::setMomentPower(int k) {
    require(k >= 2 && k <= MaxExponent, "momentPower must be at least 2 and at most MaxExponent = "+to_string(MaxExponent)+", got", k);
    momentPower = k;
}

vector<double> CoordinationForce::getCoordinationNumbers(Context& context) const {
    return getImpl(context).computeCoordinationNumbers(getContextImpl(context));
}

double CoordinationForce::evaluateParticleFunction(const vector<double>& c, vector<double>& dFdc) const {
    return CoordinationParticleFunction(*this).evaluate(c, dFdc);
}
